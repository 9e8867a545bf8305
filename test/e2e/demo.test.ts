import { execFile } from 'node:child_process'
import path from 'node:path'
import { expect, it } from 'vitest'
import { daemonPids, REPO, tempStateDir } from '../support/tutti.js'

it('the README demo (npm run demo) runs the main job end to end and leaves no daemon behind', async () => {
  const stateDir = tempStateDir('demo')
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(process.execPath, [path.join(REPO, 'scripts', 'demo.js')], { env: { ...process.env, TUTTI_STATE_DIR: stateDir }, maxBuffer: 8 * 1024 * 1024 }, (err, out) =>
      resolve({ code: err ? 1 : 0, stdout: out }),
    ),
  )
  expect(code, stdout).toBe(0)
  expect(stdout).toMatch(/Notes \(notes\)\s+mcp\s+MCP server "connector", tools notes_\*\s+ready/)
  expect(stdout).toMatch(/tools\/call everything_echo → Echo: hello over 2026-07-28/)
  expect(stdout).toMatch(/tools\/call everything_echo → Echo: hello over 2025-06-18/)
  expect(stdout).toMatch(/\$ tutti-connector-everything sum 1 2 39\n42/)
  expect(stdout).toMatch(/all facades agree/)
  expect(stdout).not.toMatch(/tutti_[A-Za-z0-9_-]{43}/)
  expect(daemonPids(stateDir)).toEqual([])
})
