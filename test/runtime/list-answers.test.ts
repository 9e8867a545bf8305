import { describe, expect, it } from 'vitest'
import { ListAnswers } from '../../src/runtime/mcpserver/list-answers.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import type { ConnectorMCPTool } from '../../src/runtime/registry/route.js'
import { SessionView } from '../../src/runtime/sessions/session-view.js'

const client = { callTool: async () => ({ content: [] }) }
const table = (key: string, n: number): ConnectorMCPTool[] =>
  buildRoute(
    key,
    1,
    client,
    Array.from({ length: n }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } })),
  ).tools
const only = (key: string) => SessionView.of([{ from: 'flags', connectors: [key] }])
/** What the fast path hands over: the view, and what it is served of the snapshot. */
const seen = (base: readonly ConnectorMCPTool[], view: SessionView) => [view, view.tools(base)] as const

describe('ListAnswers', () => {
  const base = [...table('a', 3), ...table('b', 3)]

  it('sessions that see the same share one answer, whichever of their views asked first', () => {
    const answers = new ListAnswers('{}')
    // two sessions: two SessionView instances of one print, each with its own filtered copy of the snapshot
    const first = answers.get(base, ...seen(base, only('a')))
    expect(answers.get(base, ...seen(base, only('a')))).toBe(first)
    expect(answers.get(base, ...seen(base, SessionView.WHOLE))).not.toBe(first)
    expect(first.snapshot.map((t) => t.localName)).toEqual(['a_t0', 'a_t1', 'a_t2'])
  })

  it('a new snapshot is encoded anew; past the byte budget the least recently used view goes', () => {
    const bytes = (tools: readonly ConnectorMCPTool[]) => 2 * tools.reduce((n, t) => n + t.json.length, 0)
    // room for two views of three tools each, not three
    const answers = new ListAnswers('{}', bytes(table('a', 3)) * 2)
    const a = answers.get(base, ...seen(base, only('a')))
    const b = answers.get(base, ...seen(base, only('b')))
    expect(answers.get(base, ...seen(base, only('a')))).toBe(a) // a is now the most recently used
    answers.get(base, ...seen(base, SessionView.of([{ from: 'flags', hide: ['a'] }])))
    expect(answers.get(base, ...seen(base, only('a')))).toBe(a)
    expect(answers.get(base, ...seen(base, only('b')))).not.toBe(b)
    const next = [...base]
    expect(answers.get(next, ...seen(next, only('a')))).not.toBe(a)
  })
})
