import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/support/prepared-examples.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e files spawn real daemons and upstream servers; two cores run two files at once
    maxWorkers: 2,
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
})
