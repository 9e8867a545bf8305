import type { Reporter, TestModule } from 'vitest/node'
import { reapRun } from './global-teardown.js'

/** Prints the plain closing line CI reads: `N passed, N failed` (`, N skipped`). */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const mod of testModules) {
      let failedHere = 0
      for (const test of mod.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failedHere++
        else skipped++
      }
      // a file that failed to load, or whose beforeAll failed (its tests then count as skipped), is a failure
      if (mod.state() === 'failed' && failedHere === 0) failedHere = 1
      failed += failedHere
    }
    failed += unhandledErrors.length
    // the global teardown reaps too, but only after this line: reaping here names a leak before the line CI reads
    reapRun()
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
  }
}
