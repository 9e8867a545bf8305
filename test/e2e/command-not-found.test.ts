import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { editDistance, suggestCommand } from '../../src/cli/hooks/command-not-found.js'
import { cleanupState, REPO, tempStateDir, tutti, type RunResult } from '../support/tutti.js'

const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, { hidden?: boolean }> }
const HIDDEN = Object.keys(manifest.commands).filter((id) => manifest.commands[id]!.hidden)
const PUBLIC = Object.keys(manifest.commands).filter((id) => !manifest.commands[id]!.hidden)
const HIDDEN_WORDS = ['install', 'uninstall', 'connect', 'disconnect', 'daemon', 'session', 'doctor']

/** Every one-edit typo of `s`: a dropped, doubled, swapped or replaced letter. */
function typos(s: string): string[] {
  const out = new Set<string>()
  for (let i = 0; i < s.length; i++) {
    if (s[i] === ':') continue
    out.add(s.slice(0, i) + s.slice(i + 1))
    out.add(s.slice(0, i) + s[i] + s.slice(i))
    out.add(s.slice(0, i) + (s[i] === 'x' ? 'q' : 'x') + s.slice(i + 1))
    if (i + 1 < s.length && s[i + 1] !== ':') out.add(s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2))
  }
  out.delete(s)
  return [...out].filter((t) => !t.startsWith(':') && !t.endsWith(':') && !t.includes('::'))
}

const didYouMean = (typed: string) => `command "${typed}" not found. Did you mean "tutti connector available"?`
const noSuggestion = (typed: string) => `command "${typed}" not found`

describe('suggestCommand (the pure part of the command_not_found hook)', () => {
  it('counts an adjacent transposition as one edit', () => {
    expect(editDistance('available', 'available')).toBe(0)
    expect(editDistance('availabel', 'available')).toBe(1)
    expect(editDistance('avaliable', 'available')).toBe(1)
    expect(editDistance('conector', 'connector')).toBe(1)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('kitten', 'sitting')).toBe(3)
  })

  it.each(['connector:avaliable', 'connector:availabel', 'conector:available', 'connecter:availble', 'connector:available:extra-arg', 'connector:avaliable:extra-arg'])(
    '%s → connector:available',
    (typed) => {
      expect(suggestCommand(typed, PUBLIC, HIDDEN)).toBe('connector:available')
    },
  )

  it.each(['frobnicate', 'available', 'connector:frob', 'connector:invoke', 'connector:capabilities', 'connector:skills', 'connector:skill:read', 'connector:instal', ''])(
    '%s → no suggestion',
    (typed) => {
      expect(suggestCommand(typed, PUBLIC, HIDDEN)).toBeUndefined()
    },
  )

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

describe('a mistyped command (the built binary)', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('not-found')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it.each(['connector avaliable', 'conector available', 'connector availabel'])('`tutti %s` suggests `tutti connector available` on stderr, exit 2', async (typed) => {
    const res = await tutti(dir, typed.split(' '))
    expect(res).toEqual({ code: 2, stdout: '', stderr: `tutti: ${didYouMean(typed)}\n` })
  })

  it.each(['frobnicate', 'connector instal', 'connector invoke', 'connector capabilities', 'connector skills', 'connector skill read'])(
    '`tutti %s` is "not found" with no suggestion, exit 2',
    async (typed) => {
      const res = await tutti(dir, typed.split(' '))
      expect(res).toEqual({ code: 2, stdout: '', stderr: `tutti: ${noSuggestion(typed)}\n` })
    },
  )

  it.each([
    [['connector', 'avaliable', '--json'], didYouMean('connector avaliable')],
    [['--json', 'connector', 'avaliable'], didYouMean('connector avaliable')],
    [['frobnicate', '--json'], noSuggestion('frobnicate')],
  ])('`tutti %j` with --json prints the error object on stdout, exit 2', async (args, message) => {
    const res = await tutti(dir, args)
    expect(res.code).toBe(2)
    expect(res.stderr).toBe('')
    expect(JSON.parse(res.stdout)).toEqual({ error: { code: 'ARGUMENT_INVALID', message } })
  })

  it('typos of hidden commands never name a hidden command', async () => {
    // a few typos per hidden command through the real binary; suggestCommand above covers all of them
    const cases = HIDDEN.flatMap((id) => {
      const all = typos(id)
      return [all[0]!, all[Math.floor(all.length / 2)]!, all[all.length - 1]!].map((t) => t.split(':'))
    })
    const results: Array<[string[], RunResult]> = []
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4)
      results.push(...(await Promise.all(batch.map(async (args) => [args, await tutti(dir, args)] as [string[], RunResult]))))
    }
    for (const [args, res] of results) {
      expect(res.code, args.join(' ')).toBe(2)
      expect(res.stderr, args.join(' ')).toBe(`tutti: ${noSuggestion(args.join(' '))}\n`)
      const suggestion = /Did you mean "([^"]*)"/.exec(res.stderr)?.[1] ?? ''
      for (const word of HIDDEN_WORDS) expect(suggestion, args.join(' ')).not.toMatch(new RegExp(`\\b${word}\\b`))
    }
  }, 120_000)
})
