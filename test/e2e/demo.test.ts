import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { daemonPids, EXAMPLES, REPO, tempStateDir } from '../support/tutti.js'

/**
 * The demo script, as it is, run from a checkout whose examples already hold
 * their npm dependencies (the suite's prepared copy): the demo's own job is
 * what is tested here, not npm. Installing the examples' dependencies with
 * npm is tested by self-contained-releases and packaging.
 */
const checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-demo-checkout-'))
fs.mkdirSync(path.join(checkout, 'scripts'))
fs.mkdirSync(path.join(checkout, 'examples'))
fs.copyFileSync(path.join(REPO, 'scripts', 'demo.js'), path.join(checkout, 'scripts', 'demo.js'))
// the script finds bin/, node_modules/ and examples/ next to its own directory
fs.symlinkSync(path.join(REPO, 'bin'), path.join(checkout, 'bin'))
fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'))
fs.symlinkSync(EXAMPLES, path.join(checkout, 'examples', 'connectors'))
afterAll(() => fs.rmSync(checkout, { recursive: true, force: true }))

it('the README demo (npm run demo) runs the main job end to end and leaves no daemon behind', async () => {
  const stateDir = tempStateDir('demo')
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(
      process.execPath,
      [path.join(checkout, 'scripts', 'demo.js')],
      { env: { ...process.env, TUTTI_STATE_DIR: stateDir }, maxBuffer: 8 * 1024 * 1024 },
      (err, out) => resolve({ code: err ? 1 : 0, stdout: out }),
    ),
  )
  expect(code, stdout).toBe(0)
  expect(stdout).toMatch(
    /Notes \(notes\)\s+mcp\s+MCP server "connector", tools notes_\*\s+\d+ tools, [\d.]+ kB\s+ready/,
  )
  expect(stdout).toMatch(/tools\/call everything_echo → Echo: hello over 2026-07-28/)
  expect(stdout).toMatch(/tools\/call everything_echo → Echo: hello over 2025-06-18/)
  expect(stdout).toMatch(/\$ tutti-connector-everything sum 1 2 39\n42/)
  expect(stdout).toMatch(/all facades agree/)
  expect(stdout).not.toMatch(/tutti_[A-Za-z0-9_-]{43}/)
  expect(daemonPids(stateDir)).toEqual([])
})
