import { defineConfig } from 'vitest/config'

// what both projects share; inline projects do not inherit the root's test options in vitest 4
const shared = { testTimeout: 60_000, hookTimeout: 60_000 }

export default defineConfig({
  test: {
    // the root's global setup runs once for the whole run, whichever projects are selected;
    // the reaper last, so that its teardown runs first
    globalSetup: ['./test/support/prepared-examples.ts', './test/support/global-teardown.ts'],
    // e2e files spawn real daemons and upstream servers; two cores run two files at once
    maxWorkers: 2,
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    projects: [
      // `npm run test:unit`: in-process tests of the runtime
      { test: { ...shared, name: 'unit', include: ['test/runtime/**/*.test.ts'] } },
      // `npm run test:e2e`: the built CLI, real daemons, real npm servers and agents
      { test: { ...shared, name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
})
