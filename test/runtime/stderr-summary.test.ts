import { expect, it } from 'vitest'
import { stderrSummary } from '../../src/runtime/upstream/stderr-summary.js'

it("a node crash is summed up by its error, not by node's source excerpt, stack or property dump", () => {
  const tail = [
    'node:internal/modules/cjs/loader:1210',
    '  throw err;',
    '  ^',
    '',
    "Error: Cannot find module '/r/missing.mjs'",
    '    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)',
    '    at node:internal/main/run_main_module:28:49 {',
    "  code: 'MODULE_NOT_FOUND',",
    '  requireStack: []',
    '}',
    '',
    'Node.js v20.20.2',
  ].join('\n')
  expect(stderrSummary(tail)).toBe("; stderr: Error: Cannot find module '/r/missing.mjs'")
})

it("a server's own lines are kept, the last three of them", () => {
  expect(stderrSummary('one\ntwo\nstarting up\nError: the database is locked\n')).toBe(
    '; stderr: two | starting up | Error: the database is locked',
  )
  expect(stderrSummary('')).toBe('')
})
