import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { tightenStatePermissions } from '../../src/runtime/fs/state-permissions.js'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { statePaths } from '../../src/runtime/paths.js'

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) {
    fs.chmodSync(path.join(root, 'state/connectors/k/releases/abc'), 0o755)
    fs.rmSync(root, { recursive: true, force: true })
  }
})

const mode = (p: string): string => (fs.lstatSync(p).mode & 0o7777).toString(8)

function laxState(): { root: string; state: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-perm-'))
  roots.push(root)
  const state = path.join(root, 'state')
  const files: Record<string, number> = {
    'credentials.json': 0o644,
    'installed.json': 0o666,
    'daemon.json': 0o600,
    'bin/tutti': 0o777,
    'bin/tutti-connector-k': 0o755,
    'sessions/s1/codex/config.toml': 0o664,
    'connectors/k/data/own.db': 0o644,
    'tmp/unpack-1/x': 0o644,
    'connectors/k/releases/abc/f.js': 0o444,
  }
  for (const [rel, m] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(state, rel)), { recursive: true, mode: 0o755 })
    fs.writeFileSync(path.join(state, rel), '{}', { mode: m })
    fs.chmodSync(path.join(state, rel), m)
  }
  fs.mkdirSync(path.join(state, 'state.lock'), { mode: 0o777 })
  fs.chmodSync(path.join(state, 'state.lock'), 0o777)
  fs.chmodSync(path.join(state, 'connectors/k/releases/abc'), 0o555)
  fs.chmodSync(state, 0o777)
  // a symlink to a file outside: never followed
  fs.writeFileSync(path.join(root, 'outside.txt'), 'x', { mode: 0o644 })
  fs.symlinkSync(path.join(root, 'outside.txt'), path.join(state, 'sessions/s1/link'))
  return { root, state }
}

it(
  'tightens the root, directories and files; leaves release copies, connector data, tmp/ contents and symlinks ' +
    'alone; logs a warning',
  async () => {
    const { root, state } = laxState()
    const lines: string[] = []
    const changed = await tightenStatePermissions(statePaths(state), createLogger(memorySink(lines)))
    const changedPaths = changed.map((c) => c.path).sort()
    expect(changed).toContainEqual({ path: '.', from: '0777', to: '0700' })
    expect(changed).toContainEqual({ path: 'credentials.json', from: '0644', to: '0600' })
    expect(changedPaths).toEqual([
      '.',
      'bin',
      'bin/tutti',
      'connectors',
      'connectors/k',
      'connectors/k/data',
      'connectors/k/releases',
      'credentials.json',
      'installed.json',
      'sessions',
      'sessions/s1',
      'sessions/s1/codex',
      'sessions/s1/codex/config.toml',
      'state.lock',
      'tmp',
    ])
    expect(mode(path.join(state, 'bin/tutti'))).toBe('700')
    expect(mode(path.join(state, 'bin/tutti-connector-k'))).toBe('755') // cmd-shim's mode, by design
    expect(mode(path.join(state, 'state.lock'))).toBe('700')
    expect(mode(path.join(state, 'connectors/k/releases/abc'))).toBe('555')
    expect(mode(path.join(state, 'connectors/k/releases/abc/f.js'))).toBe('444')
    expect(mode(path.join(state, 'connectors/k/data/own.db'))).toBe('644')
    expect(mode(path.join(state, 'tmp/unpack-1/x'))).toBe('644')
    expect(mode(path.join(root, 'outside.txt'))).toBe('644')
    const warnings = lines.map((l) => JSON.parse(l)).filter((r) => r.level === 'warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ msg: expect.stringMatching(/permissions/), changed })
    // a second start finds nothing to do and says nothing
    lines.length = 0
    expect(await tightenStatePermissions(statePaths(state), createLogger(memorySink(lines)))).toEqual([])
    expect(lines).toEqual([])
  },
)

it('a shim writable by others loses only the write bits; a missing state dir is not an error', async () => {
  const { state } = laxState()
  fs.chmodSync(path.join(state, 'bin/tutti-connector-k'), 0o777)
  const changed = await tightenStatePermissions(statePaths(state), createLogger(memorySink([])))
  expect(changed).toContainEqual({ path: 'bin/tutti-connector-k', from: '0777', to: '0755' })
  expect(await tightenStatePermissions(statePaths(path.join(state, 'nope')), createLogger(memorySink([])))).toEqual([])
})
