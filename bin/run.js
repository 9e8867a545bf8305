#!/usr/bin/env node
// oclif's engine check loads semver on every start (~80 ms); package.json's
// "engines" already states what Node we need.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
