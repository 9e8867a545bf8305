import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupState, REPO, tempStateDir, tutti } from '../support/tutti.js'
import { typos } from '../support/typos.js'

// A few mistyped commands through the built binary: oclif's split of the words reaches the hook, whose
// answer is exit 2 with the message on stderr, or as JSON with --json. Every case of the suggestion itself
// is covered in-process by test/runtime/command-not-found.test.ts.
const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { hidden?: boolean }>
}
const HIDDEN = Object.keys(manifest.commands).filter((id) => manifest.commands[id]!.hidden)
const HIDDEN_WORDS = ['install', 'uninstall', 'connect', 'disconnect', 'daemon', 'session', 'doctor']

const didYouMean = (typed: string) => `command "${typed}" not found. Did you mean "tutti connector available"?`
const noSuggestion = (typed: string) => `command "${typed}" not found`

describe('a mistyped command (the built binary)', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('not-found')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  // a typo in the second word, and in the first
  it.each(['connector avaliable', 'conector available'])(
    '`tutti %s` suggests `tutti connector available` on stderr, exit 2',
    async (typed) => {
      const res = await tutti(dir, typed.split(' '))
      expect(res).toEqual({ code: 2, stdout: '', stderr: `tutti: ${didYouMean(typed)}\n` })
    },
  )

  // one word; a typo of a hidden command; a retired command of three words
  it.each(['frobnicate', 'connector instal', 'connector skill read'])(
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
    // one typo each of a few hidden commands, of one and of two words (the unit test covers all of them)
    const ids = ['commands', 'connector:uninstall', 'daemon:doctor', 'session:prepare'].filter((id) =>
      HIDDEN.includes(id),
    )
    expect(ids).toHaveLength(4)
    const cases = ids.map((id) => typos(id)[Math.floor(typos(id).length / 2)]!.split(':'))
    const results = await Promise.all(cases.map((args) => tutti(dir, args)))
    cases.forEach((args, i) => {
      const res = results[i]!
      expect(res.code, args.join(' ')).toBe(2)
      expect(res.stderr, args.join(' ')).toBe(`tutti: ${noSuggestion(args.join(' '))}\n`)
      const suggestion = /Did you mean "([^"]*)"/.exec(res.stderr)?.[1] ?? ''
      for (const word of HIDDEN_WORDS) expect(suggestion, args.join(' ')).not.toMatch(new RegExp(`\\b${word}\\b`))
    })
  })
})
