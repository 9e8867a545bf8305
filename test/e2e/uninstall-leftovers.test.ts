import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { probeConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { cleanupState, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

describe('uninstall leaves nothing of a connector behind but data it wrote', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('uninstall-leftovers')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('removes its empty data dir, its log and the shim targets that would point at nothing', async () => {
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-uninstall-fs-'))
    // a real server from npm, added as a command
    const command = ['--', 'mcp-server-filesystem', workspace]
    const added = await tutti(dir, ['connector', 'install', '--key', 'files', ...command])
    expect(added.stdout).toContain('installed files')
    expect(fs.readdirSync(path.join(dir, 'connectors', 'files')).sort()).toEqual(['connector.log', 'data', 'releases'])
    // an SDK v1 server refuses server/discover: its 2025 verdict is kept, and goes with the connector
    const verdict = path.join(dir, 'upstream-eras', 'files.json')
    expect(fs.existsSync(verdict)).toBe(true)
    expect(await tuttiJson(dir, ['connector', 'uninstall', 'files'])).toMatchObject({ uninstalled: true, data: 'none' })
    expect(fs.existsSync(path.join(dir, 'connectors', 'files'))).toBe(false)
    expect(fs.existsSync(verdict)).toBe(false)
    fs.rmSync(workspace, { recursive: true, force: true })
    // a connector with a CLI: its shim and the launch targets of every generation go
    await installed(dir, probeConnector('tool'))
    await installed(dir, probeConnector('tool', { version: '1.1.0' }))
    expect(fs.readdirSync(path.join(dir, 'shims', 'tool')).length).toBeGreaterThan(0)
    await tuttiJson(dir, ['connector', 'uninstall', 'tool'])
    expect(fs.existsSync(path.join(dir, 'shims', 'tool'))).toBe(false)
    expect(fs.readdirSync(path.join(dir, 'bin')).filter((name) => name.includes('tool'))).toEqual([])
    expect(fs.existsSync(path.join(dir, 'connectors', 'tool'))).toBe(false)
  })

  it('keeps a data dir with something in it, and only that', async () => {
    await installed(dir, probeConnector('keeper'))
    fs.writeFileSync(path.join(dir, 'connectors', 'keeper', 'data', 'notes.txt'), 'mine\n')
    const dataDir = path.join(dir, 'connectors', 'keeper', 'data')
    expect(await tuttiJson(dir, ['connector', 'uninstall', 'keeper'])).toMatchObject({ data: 'kept', dataDir })
    expect(fs.readdirSync(path.join(dir, 'connectors', 'keeper'))).toEqual(['data'])
    expect(fs.readdirSync(dataDir)).toEqual(['notes.txt'])
  })
})
