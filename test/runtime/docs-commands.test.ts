import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from '../support/tutti.js'

/*
 * Every `tutti …` command line the README and docs/ show, in code blocks and in inline code, must name a
 * command that exists and only flags that command has. Docs drift silently otherwise: a renamed flag keeps
 * working in the text and fails for the reader who copies it. The commands and their flags come from
 * oclif.manifest.json, which test/e2e/public-surface.test.ts holds to the built commands.
 */

interface ManifestFlag {
  char?: string
  allowNo?: boolean
}
const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { flags: Record<string, ManifestFlag> }>
}
const COMMANDS = manifest.commands
const TOPICS = new Set(
  Object.keys(COMMANDS)
    .filter((id) => id.includes(':'))
    .map((id) => id.split(':')[0]!),
)
// oclif answers these on the root and on every command, before the command parses its own flags
const ROOT_FLAGS = new Set(['--help', '-h', '--version'])

/*
 * Command paths the docs show on purpose although no such command exists: the suggestion oclif's
 * command_not_found hook gives for a typo. Each must really be absent and really be shown, so the list
 * cannot hide a broken command or outlive its text.
 */
const SHOWN_AS_WRONG = new Set(['connector avaliable'])

/** Where a command was found, for the failure message. */
interface Shown {
  file: string
  line: number
  text: string
  words: string[]
}

function docFiles(): string[] {
  const docs = (fs.readdirSync(path.join(REPO, 'docs'), { recursive: true }) as string[])
    .filter((rel) => rel.endsWith('.md'))
    .map((rel) => path.join('docs', rel))
  return ['README.md', ...docs.sort()]
}

/**
 * The shell-ish text of a document: each code block line (a line ending in `\` joined to the next), and each
 * inline code span (which may wrap across lines; a table's `\|` is a `|`). Prose outside code is not read:
 * "tutti" there is the product, not a command.
 */
function codeSegments(markdown: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = []
  const lines = markdown.split('\n')
  const prose: string[] = []
  let fence: string | undefined
  let pending: { line: number; text: string } | undefined
  lines.forEach((raw, i) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1]
    if (fence === undefined && opener) {
      fence = opener
      prose.push('')
      return
    }
    if (fence !== undefined) {
      prose.push('')
      if (raw.trim().startsWith(fence)) {
        fence = undefined
        return
      }
      const joined = pending ? { line: pending.line, text: `${pending.text} ${raw}` } : { line: i + 1, text: raw }
      if (raw.endsWith('\\')) pending = { line: joined.line, text: joined.text.slice(0, -1) }
      else {
        pending = undefined
        out.push(joined)
      }
      return
    }
    prose.push(raw)
  })
  const text = prose.join('\n')
  for (const m of text.matchAll(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)) {
    const line = text.slice(0, m.index).split('\n').length
    // a double-backtick span quotes code that has its own backticks: ``run `tutti …` ``
    out.push({
      line,
      text: m[2]!
        .replace(/\\\|/g, '|')
        .replace(/`/g, ' ')
        .replace(/\s*\n\s*/g, ' '),
    })
  }
  return out
}

type Token = { op: string } | { word: string }

/** Words and the operators that start or end a command; quotes group, `#` starts a comment. */
function tokens(text: string): Token[] {
  // `eval "$(tutti …)"`: the substitution is a command of its own, quoted or not
  const s = text.replace(/"\$\(/g, ' $( ').replace(/\)"/g, ' ) ')
  const out: Token[] = []
  let i = 0
  while (i < s.length) {
    const c = s[i]!
    if (/\s/.test(c)) {
      i++
      continue
    }
    if (c === '#') break
    const op = /^(\$\(|&&|\|\||[;|&()])/.exec(s.slice(i))?.[1]
    if (op) {
      out.push({ op })
      i += op.length
      continue
    }
    let word = ''
    while (i < s.length && !/[\s;)]/.test(s[i]!)) {
      const q = s[i]!
      if (q === '"' || q === "'") {
        const end = s.indexOf(q, i + 1)
        word += s.slice(i + 1, end < 0 ? s.length : end)
        i = end < 0 ? s.length : end + 1
      } else {
        word += q
        i++
      }
    }
    out.push({ word })
  }
  return out
}

// words that may stand before a command without being it: a prompt, env assignments, eval and the like
const PREFIX = /^(\$|eval|exec|env|time|sudo|command|nohup|[A-Za-z_][A-Za-z0-9_]*=.*)$/

// the first word of every command path: after these, `tutti` is a command wherever it stands, as in an
// error message's "…; run tutti connector connect K"
const FIRST_WORDS = new Set(Object.keys(COMMANDS).map((id) => id.split(':')[0]!))

/**
 * The words after each `tutti` that stands where a command starts (or that a command word follows), up to
 * `--` or the command's end.
 */
function tuttiCommands(text: string): string[][] {
  const found: string[][] = []
  let atStart = true
  let current: string[] | undefined
  const finish = () => {
    if (current) found.push(current)
    current = undefined
  }
  const all = tokens(text)
  all.forEach((t, i) => {
    const next = all[i + 1]
    const commandFollows = next !== undefined && 'word' in next && FIRST_WORDS.has(next.word.replace(/[,.:;]+$/, ''))
    if ('op' in t) {
      finish()
      atStart = true
      return
    }
    if (current) {
      // after `--`: the agent's or server's own command line, which may be tutti again
      if (t.word === '--') {
        finish()
        atStart = true
      } else current.push(t.word)
      return
    }
    if (t.word === '--') atStart = true
    else if (t.word === 'tutti' && (atStart || commandFollows)) current = []
    else if (!(atStart && PREFIX.test(t.word))) atStart = false
  })
  finish()
  return found
}

function shownCommands(): Shown[] {
  const shown: Shown[] = []
  for (const file of docFiles()) {
    for (const seg of codeSegments(fs.readFileSync(path.join(REPO, file), 'utf8'))) {
      for (const words of tuttiCommands(seg.text)) shown.push({ file, line: seg.line, text: seg.text.trim(), words })
    }
  }
  return shown
}

/** The command a line runs, the longest known path of its leading words; `topic` when it names only a topic. */
function resolve(words: string[]): { id: string; rest: string[] } | { unknown: string } | { topic: string } {
  const parts: string[] = []
  for (const w of words) {
    // `bridge:` and `available,` in running text end the path as the word itself does
    const word = w.replace(/[,.:;]+$/, '')
    if (!/^[a-z][a-z0-9-]*$/.test(word)) break
    parts.push(word)
    if (word !== w) break
  }
  for (let k = parts.length; k > 0; k--) {
    const id = parts.slice(0, k).join(':')
    if (COMMANDS[id]) return { id, rest: words.slice(k) }
  }
  if (parts.length === 0) return { id: '', rest: words }
  if (parts.length === 1 && TOPICS.has(parts[0]!)) return { topic: parts[0]! }
  return { unknown: parts.slice(0, TOPICS.has(parts[0]!) ? 2 : 1).join(' ') }
}

/** The flags a command line's words use: `--name`, `--no-name`, `-c`; placeholders and values are skipped. */
function flagsIn(words: string[]): string[] {
  const flags: string[] = []
  for (const w of words) {
    for (const piece of w
      .replace(/^[[(]+/, '')
      .replace(/[\]),.:;]+$/, '')
      .split('|')) {
      const long = /^--([a-z][a-z0-9-]*)(=.*)?$/.exec(piece)
      if (long) flags.push(`--${long[1]}`)
      else if (/^-[A-Za-z]+$/.test(piece)) flags.push(...[...piece.slice(1)].map((c) => `-${c}`))
    }
  }
  return flags
}

function hasFlag(id: string, flag: string): boolean {
  if (ROOT_FLAGS.has(flag)) return true
  const flags = id ? COMMANDS[id]!.flags : {}
  if (flag.startsWith('--')) {
    const name = flag.slice(2)
    if (flags[name]) return true
    return name.startsWith('no-') && flags[name.slice(3)]?.allowNo === true
  }
  return Object.values(flags).some((f) => f.char === flag.slice(1))
}

describe('the tutti commands shown in README.md and docs/', () => {
  const shown = shownCommands()
  const where = (s: Shown) => `${s.file}:${s.line}: ${s.text}`

  it('finds the commands it is meant to check (a parser that finds nothing passes everything)', () => {
    expect(Object.values(COMMANDS).every((c) => typeof c.flags === 'object')).toBe(true)
    const ids = new Set(shown.map((s) => resolve(s.words)).map((r) => ('id' in r ? r.id : '')))
    const expected = ['connector:install', 'connector:connect', 'connector:logs', 'session:exec', 'session:bridge']
    for (const id of [...expected, 'session:prepare', 'daemon:status', 'daemon:doctor']) expect(ids, id).toContain(id)
    expect(shown.filter((s) => s.file === 'README.md').length).toBeGreaterThan(20)
    expect(new Set(shown.map((s) => s.file)).size).toBeGreaterThan(8)
  })

  it('names only commands that exist', () => {
    const unknown: string[] = []
    const wrongOnPurpose = new Set<string>()
    for (const s of shown) {
      const r = resolve(s.words)
      if (!('unknown' in r)) continue
      if (SHOWN_AS_WRONG.has(r.unknown)) wrongOnPurpose.add(r.unknown)
      else unknown.push(`tutti ${r.unknown} (${where(s)})`)
    }
    expect(unknown).toEqual([])
    expect([...wrongOnPurpose].sort()).toEqual([...SHOWN_AS_WRONG].sort())
    for (const p of SHOWN_AS_WRONG) expect(COMMANDS[p.replace(/ /g, ':')]).toBeUndefined()
  })

  it('uses only flags each command has', () => {
    const wrong: string[] = []
    for (const s of shown) {
      const r = resolve(s.words)
      if (!('id' in r)) continue
      for (const flag of flagsIn(r.rest)) {
        if (!hasFlag(r.id, flag)) wrong.push(`tutti ${r.id.replace(/:/g, ' ') || '(root)'} ${flag} (${where(s)})`)
      }
    }
    expect(wrong).toEqual([])
  })
})

describe('how command lines are read', () => {
  it('takes a command from a prompt, env assignments, eval "$(…)", a wrapped command line and a pipe', () => {
    expect(tuttiCommands('$ TUTTI_STATE_DIR=/tmp/t tutti daemon run')).toEqual([['daemon', 'run']])
    expect(tuttiCommands('eval "$(tutti session prepare --provider claude --shell)"')).toEqual([
      ['session', 'prepare', '--provider', 'claude', '--shell'],
    ])
    expect(tuttiCommands('claude mcp add connector -- tutti session bridge')).toEqual([['session', 'bridge']])
    expect(tuttiCommands('tutti connector available --json | jq .  # comment --nope')).toEqual([
      ['connector', 'available', '--json'],
    ])
  })

  it('stops at `--` and reads no product name or output line as a command', () => {
    expect(tuttiCommands('tutti session exec --provider claude -- claude --bogus')).toEqual([
      ['session', 'exec', '--provider', 'claude'],
    ])
    expect(tuttiCommands('2026-12-04T06:30:21.331Z tutti  starting release 0.0.0')).toEqual([])
    expect(tuttiCommands('cd app && tutti-connector-notes --help')).toEqual([])
    expect(tuttiCommands('sign-in required: run tutti connector connect K')).toEqual([['connector', 'connect', 'K']])
  })

  it('resolves paths, topics and unknown commands, and reads flags from notation', () => {
    expect(resolve(['connector', 'logs', 'notes', '-f'])).toEqual({ id: 'connector:logs', rest: ['notes', '-f'] })
    expect(resolve(['connector'])).toEqual({ topic: 'connector' })
    expect(resolve(['connector', 'frobnicate'])).toEqual({ unknown: 'connector frobnicate' })
    expect(resolve(['frobnicate', 'now'])).toEqual({ unknown: 'frobnicate' })
    const notation = ['[--no-wait]', '--provider', 'codex|claude', '<key>…|--all', 'FILE|-', '--timeout=5', '-fn']
    expect(flagsIn(notation)).toEqual(['--no-wait', '--provider', '--all', '--timeout', '-f', '-n'])
    expect(hasFlag('connector:install', '--no-wait')).toBe(true)
    expect(hasFlag('connector:install', '--no-such-flag')).toBe(false)
    expect(hasFlag('connector:logs', '-f')).toBe(true)
    expect(hasFlag('connector:logs', '-x')).toBe(false)
  })
})
