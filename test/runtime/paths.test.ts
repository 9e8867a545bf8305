import path from 'node:path'
import { expect, it } from 'vitest'
import { resolveStateDir, statePaths } from '../../src/runtime/paths.js'

it('TUTTI_STATE_DIR wins over everything', () => {
  expect(resolveStateDir({ TUTTI_STATE_DIR: '/x/y', XDG_STATE_HOME: '/xdg', HOME: '/h' }, 'linux')).toBe('/x/y')
})

it('XDG_STATE_HOME/tutti next', () => {
  expect(resolveStateDir({ XDG_STATE_HOME: '/xdg', HOME: '/h' }, 'linux')).toBe('/xdg/tutti')
})

it('per-platform defaults', () => {
  expect(resolveStateDir({ HOME: '/h' }, 'linux')).toBe('/h/.local/state/tutti')
  expect(resolveStateDir({ HOME: '/h' }, 'darwin')).toBe('/h/Library/Application Support/tutti')
  expect(resolveStateDir({ HOME: '/h', LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32')).toBe(
    path.join('C:\\Users\\u\\AppData\\Local', 'tutti'),
  )
})

it('every path lives under the root; shims are tutti-connector-<key> in bin/', () => {
  const p = statePaths('/s')
  expect(p.shimPath('github')).toBe('/s/bin/tutti-connector-github')
  expect(p.releaseDir('github', 'abc')).toBe('/s/connectors/github/releases/abc')
  expect(p.dataDir('github')).toBe('/s/connectors/github/data')
  for (const value of Object.values(p)) if (typeof value === 'string') expect(value.startsWith('/s')).toBe(true)
})
