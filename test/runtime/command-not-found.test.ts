import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { editDistance, suggestCommand } from '../../src/cli/hooks/command-not-found.js'
import { REPO } from '../support/tutti.js'
import { typos } from '../support/typos.js'

// The pure part of the command_not_found hook, for every case; test/e2e/command-not-found.test.ts runs a few
// of them through the built binary (oclif's splitting of the words, the message on stderr or as JSON, exit 2).
const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { hidden?: boolean }>
}
const HIDDEN = Object.keys(manifest.commands).filter((id) => manifest.commands[id]!.hidden)
const PUBLIC = Object.keys(manifest.commands).filter((id) => !manifest.commands[id]!.hidden)

describe('suggestCommand (the pure part of the command_not_found hook)', () => {
  it('counts an adjacent transposition as one edit', () => {
    expect(editDistance('available', 'available')).toBe(0)
    expect(editDistance('availabel', 'available')).toBe(1)
    expect(editDistance('avaliable', 'available')).toBe(1)
    expect(editDistance('conector', 'connector')).toBe(1)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('kitten', 'sitting')).toBe(3)
  })

  it.each([
    'connector:avaliable',
    'connector:availabel',
    'conector:available',
    'connecter:availble',
    'connector:available:extra-arg',
    'connector:avaliable:extra-arg',
  ])('%s → connector:available', (typed) => {
    expect(suggestCommand(typed, PUBLIC, HIDDEN)).toBe('connector:available')
  })

  it.each([
    'frobnicate',
    'available',
    'connector:frob',
    'connector:invoke',
    'connector:capabilities',
    'connector:skills',
    'connector:skill:read',
    'connector:instal',
    '',
  ])('%s → no suggestion', (typed) => {
    expect(suggestCommand(typed, PUBLIC, HIDDEN)).toBeUndefined()
  })

  it('no one-edit typo of any hidden command gets a suggestion, and a hidden id is never suggested', () => {
    expect(HIDDEN.length).toBeGreaterThan(5)
    for (const id of HIDDEN) {
      for (const typed of typos(id)) {
        expect(suggestCommand(typed, PUBLIC, HIDDEN), typed).toBeUndefined()
        // even with the hidden list withheld, only a public id can come back
        expect([undefined, ...PUBLIC], typed).toContain(suggestCommand(typed, PUBLIC))
      }
    }
  })
})
