#!/usr/bin/env node
// Every command through oclif. bin/run.js comes here for everything its lean
// `connector available` entry does not answer; tests run it directly to
// compare the two answers.
import { createRequire } from 'node:module'

// oclif's engine check loads semver on every start (~80 ms); package.json's
// "engines" already states what Node we need.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
// oclif from its one-file bundle with a code cache, when the build made it (bin/oclif-core.cjs)
createRequire(import.meta.url)('./oclif-core.cjs').useOclifBundle()
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
