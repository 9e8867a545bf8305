import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAULT_TOOLS, fullConnector, lazyConnector, probeConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared, uninstalled } from '../support/in-process.js'
import { modernClient } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

// Small releases (fixture-connector.ts's fullConnector), not the bundled examples: doctor's checks do not
// depend on what a server does. One state dir for the file; every test starts from a clean report and leaves one (it
// repairs what it broke).
describe('tutti daemon doctor: facade parity', () => {
  let dir: string
  const journal = fullConnector('journal')
  const doctor = async () => {
    const res = await tutti(dir, ['daemon', 'doctor', '--json'])
    return { code: res.code, report: JSON.parse(res.stdout) }
  }

  beforeAll(async () => {
    dir = tempStateDir('doctor')
    await installed(dir, journal)
    await installed(dir, fullConnector('vault', { auth: 'VAULT_KEY' }))
    await connected(dir, 'vault', { env: { VAULT_KEY: 'doctor-key' } })
    await installed(dir, probeConnector('probe'))
    await installed(dir, lazyConnector('lazy'))
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('a clean install: no findings, exit 0, every facade checked', async () => {
    const { code, report } = await doctor()
    expect(report.findings).toEqual([])
    expect(code).toBe(0)
    expect(report.checked).toMatchObject({ connectors: 4, shims: 3, skillRoots: 2, eras: ['2026-07-28', '2025-06-18'] })
    expect(report.checked.tools).toBeGreaterThan(20)
    const human = await tutti(dir, ['daemon', 'doctor'])
    expect(human.stdout).toMatch(/all facades agree/)
  })

  it('a deleted shim is found, with a fix that works', async () => {
    fs.rmSync(path.join(dir, 'bin', 'tutti-connector-probe'))
    const { code, report } = await doctor()
    expect(code).toBe(1)
    expect(report.findings).toEqual([
      expect.objectContaining({
        check: 'shims',
        connector: 'probe',
        problem: 'tutti-connector-probe is missing from the bin dir',
        fix: expect.stringMatching(/tutti daemon start/),
      }),
    ])
    await tuttiJson(dir, ['daemon', 'start'])
    expect((await doctor()).report.findings).toEqual([])
  })

  it('a stray shim is found', async () => {
    const stray = path.join(dir, 'bin', 'tutti-connector-ghost')
    fs.writeFileSync(stray, '#!/bin/sh\necho boo\n', { mode: 0o755 })
    const { code, report } = await doctor()
    expect(code).toBe(1)
    expect(report.findings).toEqual([
      expect.objectContaining({
        check: 'shims',
        connector: 'ghost',
        problem: expect.stringMatching(/stray shim .*tutti-connector-ghost/),
      }),
    ])
    await tuttiJson(dir, ['daemon', 'start'])
    expect(fs.existsSync(stray)).toBe(false)
    expect((await doctor()).report.findings).toEqual([])
  })

  it('a corrupted Skill is found; reinstalling repairs the release', async () => {
    const installed = JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8'))
    const file = path.join(
      dir,
      'connectors',
      'journal',
      'releases',
      installed.connectors.journal.digest,
      'skills',
      'journal-workflow',
      'SKILL.md',
    )
    fs.chmodSync(file, 0o644)
    fs.writeFileSync(file, 'no front matter any more\n')
    const { code, report } = await doctor()
    expect(code).toBe(1)
    expect(report.findings).toEqual([
      expect.objectContaining({
        check: 'skills',
        connector: 'journal',
        problem: expect.stringMatching(/journal-workflow\/SKILL\.md: missing YAML front matter/),
        fix: expect.stringMatching(/reinstall/),
      }),
    ])
    const reinstall = await tuttiJson(dir, ['connector', 'install', journal])
    expect(reinstall.changed).toBe(false)
    expect(fs.readFileSync(file, 'utf8')).toMatch(/name: journal-workflow/)
    expect((await doctor()).report.findings).toEqual([])
  })

  it('an upstream that disagrees with its declaration is found once it runs', async () => {
    const declared = FAULT_TOOLS.map((t) => (t.name === 'echo' ? { ...t, description: 'declared long ago' } : t))
    await installed(dir, lazyConnector('drifty', { declared }))
    expect((await doctor()).report.findings).toEqual([]) // not running yet: nothing to compare
    const binding = (await prepared(dir, { workspace: 'w', session: 'doc' })).mcpServers[0]!
    const client = await modernClient(binding)
    await client.callTool({ name: 'drifty_echo', arguments: { message: 'wake up' } })
    await client.close()
    const { code, report } = await doctor()
    expect(code).toBe(1)
    expect(report.findings).toEqual([
      expect.objectContaining({
        check: 'declared-tools',
        connector: 'drifty',
        problem: expect.stringMatching(/echo \(fields differ: description\)/),
        fix: expect.stringMatching(/update mcp\.tools/),
      }),
    ])
    // the other tests start from a clean report
    await uninstalled(dir, 'drifty', { purge: true })
    expect((await doctor()).report.findings).toEqual([])
  })
})
