import { defineConfig } from 'vitest/config'
import LongestFirst from './test/support/longest-first.js'

/** Unit files that replace a module with vi.mock (see the unit project). */
const MOCKS_MODULES = ['test/runtime/verified-tokens.test.ts']
// what both projects share; inline projects do not inherit the root's test options in vitest 4
const shared = { testTimeout: 60_000, hookTimeout: 60_000 }
// a loaded machine is slow, never wrong: the e2e bounds only decide how long a hung test takes to fail
const e2e = { testTimeout: 120_000, hookTimeout: 120_000 }

export default defineConfig({
  test: {
    // the root's global setup runs once for the whole run, whichever projects are selected;
    // the reaper last, so that its teardown runs first
    globalSetup: ['./test/support/prepared-examples.ts', './test/support/global-teardown.ts'],
    // e2e files spawn real daemons, upstream servers, npm and agents, and wait on them: a third file fills the
    // waits of the other two (`npx vitest run`, quiet, 2 cores: 448 s with 2 workers, 400 s with 3, 406 s with 4)
    maxWorkers: 3,
    // the longest files first (test/support/file-seconds.json), so that the workers finish together
    sequence: { sequencer: LongestFirst },
    // TUTTI_RECORD_TIMES=1 on a full run rewrites file-seconds.json
    reporters: ['default', './test/support/file-seconds-reporter.ts', './test/support/closing-line-reporter.ts'],
    projects: [
      // `npm run test:unit`: in-process tests of the runtime, in workers that are reused from file to file: each new
      // worker costs about 0.5 s of CPU, which halved the unit run's CPU (32 -> 16 s). A file that mocks a module
      // needs a worker of its own, where the mock is in place before anything imports the module.
      {
        test: {
          ...shared,
          name: 'unit',
          isolate: false,
          include: ['test/runtime/**/*.test.ts'],
          exclude: MOCKS_MODULES,
        },
      },
      { test: { ...shared, name: 'unit-mocks', include: MOCKS_MODULES } },
      // `npm run test:e2e`: the built CLI, real daemons, real npm servers and agents. Workers are reused from file
      // to file as in the unit project: what is real runs in the processes the tests start, not in the worker,
      // and no e2e file mocks a module or leaves process state behind (the environment is copied per child).
      { test: { ...e2e, name: 'e2e', isolate: false, include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
})
