import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { REPO } from '../support/tutti.js'

// CONTRIBUTING's rule for errors, checked on the text of src/: every catch rethrows, logs with a reason, or says
// in a comment why swallowing is safe; a failure is a typed TuttiError, not a bare Error.

function sources(): Array<{ file: string; text: string }> {
  return (fs.readdirSync(path.join(REPO, 'src'), { recursive: true }) as string[])
    .filter((rel) => rel.endsWith('.ts'))
    .sort()
    .map((rel) => ({ file: path.join('src', rel), text: fs.readFileSync(path.join(REPO, 'src', rel), 'utf8') }))
}

const CATCH = /\bcatch\s*(?:\([^)]*\)\s*)?\{|\.catch\(/g
/** A comment, a rethrow, or a log call (the logger, a warn callback, the console, stderr). */
const SAYS_WHY = /\/\/|\/\*|\bthrow\b|\b(?:log|logger|console)\??\.\w+\(|\b(?:log|warn)\(|stderr\.write\(/
const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*)/
/** How many lines of a catch's body, after the line it opens on, may say why. */
const BODY_LINES = 3

/** The catch's own text: from `catch` to the end of its body or callback, at most BODY_LINES further lines. */
function catchText(text: string, at: number, opener: '{' | '('): string {
  const closer = opener === '{' ? '}' : ')'
  const start = text.indexOf(opener, at)
  let depth = 0
  let newlines = 0
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (c === opener) depth++
    else if (c === closer && --depth === 0) return text.slice(at, i + 1)
    else if (c === '\n' && ++newlines > BODY_LINES) return text.slice(at, i)
  }
  return text.slice(at)
}

function bareCatches(file: string, text: string): string[] {
  const lines = text.split('\n')
  const out: string[] = []
  for (const m of text.matchAll(CATCH)) {
    const line = text.slice(0, m.index).split('\n').length - 1
    // a comment that mentions catch is no catch
    if (COMMENT_LINE.test(lines[line]!)) continue
    const above = lines[line - 1] ?? ''
    if (COMMENT_LINE.test(above)) continue
    if (SAYS_WHY.test(catchText(text, m.index, m[0].startsWith('.') ? '(' : '{'))) continue
    out.push(`${file}:${line + 1}: ${lines[line]!.trim()}`)
  }
  return out
}

it('every catch in src/ rethrows, logs, or says in a comment why swallowing is safe', () => {
  expect(sources().flatMap((s) => bareCatches(s.file, s.text))).toEqual([])
})

it('the check finds a bare catch, a bare promise catch, and passes the ones that say why', () => {
  const bare = ['try {', '  x()', '} catch {', '  return undefined', '}', 'await p.catch(() => undefined)'].join('\n')
  expect(bareCatches('f.ts', bare)).toEqual(['f.ts:3: } catch {', 'f.ts:6: await p.catch(() => undefined)'])
  const said = [
    'try {',
    '  x()',
    '} catch (err) {',
    "  log.warn('x failed', { error: err })",
    '}',
    '// the file may already be gone: removal is best-effort',
    'await p.catch(() => undefined)',
    'await q.catch((err) => {',
    '  throw wrapped(err)',
    '})',
    'try {',
    '  y()',
    '} catch {',
    '  // no log yet',
    '}',
  ].join('\n')
  expect(bareCatches('f.ts', said)).toEqual([])
})

/**
 * Where a plain Error is deliberate, and why. Anything else that fails throws a TuttiError with a code from
 * src/runtime/errors.ts.
 */
const PLAIN_ERRORS: Record<string, { count: number; why: string }> = {
  // both: a call's abort reason. The SDK sends String(reason) upstream as the cancel's reason ("Error: …"), and
  // asProtocolError names the connector in the call's answer only for an error that is not a TuttiError
  'src/runtime/mcpserver/legacy-cancellation.ts': { count: 1, why: 'an abort reason the SDK stringifies' },
  'src/runtime/mcpserver/node-front.ts': { count: 1, why: 'an abort reason the SDK stringifies' },
  // a parked 2026-07-28 call given up: the same abort reason, for the same reason
  'src/runtime/mcpserver/relayed-call.ts': { count: 1, why: 'an abort reason the SDK stringifies' },
  // a listen stream's own stop, and a task poll's abort: the same abort reasons, never shown to a user
  'src/runtime/mcpserver/task-listen.ts': { count: 1, why: 'the abort reason of a listen stream that ended' },
  'src/runtime/mcpserver/task-service.ts': { count: 1, why: 'an abort reason the SDK stringifies' },
  'src/runtime/upstream/stdio-transport.ts': {
    count: 1,
    why: "send()'s rejection becomes a tool call's answer through the SDK, prefixed with the connector's name",
  },
}

it('src/ throws typed TuttiErrors: a plain new Error only where the allowlist says why', () => {
  const found: Record<string, number> = {}
  for (const { file, text } of sources()) {
    const count = text.match(/\bnew Error\(/g)?.length ?? 0
    if (count) found[file] = count
  }
  const allowed = Object.fromEntries(Object.entries(PLAIN_ERRORS).map(([file, { count }]) => [file, count]))
  expect(found).toEqual(allowed)
})
