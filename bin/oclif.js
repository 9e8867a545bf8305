#!/usr/bin/env node
// Every command through oclif. bin/run.js comes here for everything its lean
// `connector available` entry does not answer; tests run it directly to
// compare the two answers.
// oclif's engine check loads semver on every start (~80 ms); package.json's
// "engines" already states what Node we need.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
