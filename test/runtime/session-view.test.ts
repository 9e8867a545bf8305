import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { SessionTokens } from '../../src/runtime/sessions/session-tokens.js'
import { SessionView, type ViewLayer, type ViewedTool } from '../../src/runtime/sessions/session-view.js'
import { tempStateDir } from '../support/tutti.js'

const tool = (connector: string, upstreamName: string): ViewedTool => ({
  connector,
  upstreamName,
  localName: `${connector}_${upstreamName}`,
})
const TABLE = [tool('a', 'one'), tool('a', 'two'), tool('b', 'one'), tool('c', 'three')]
const names = (view: SessionView) => view.tools(TABLE).map((t) => t.localName)

describe('SessionView', () => {
  it('no layer, or layers that narrow nothing, see everything, with the same list back', () => {
    expect(SessionView.of(undefined).whole).toBe(true)
    const empty = SessionView.of([{ from: 'project file /w/.tutti/connectors.json' }])
    expect(empty.whole).toBe(true)
    expect(empty.tools(TABLE)).toBe(TABLE)
    expect(empty.sources).toEqual(['project file /w/.tutti/connectors.json'])
  })

  it('connectors allow, hide narrows further, and tool filters match upstream or published names', () => {
    expect(names(SessionView.of([{ from: 'flags', connectors: ['a', 'c'] }]))).toEqual(['a_one', 'a_two', 'c_three'])
    expect(names(SessionView.of([{ from: 'flags', hide: ['a'] }]))).toEqual(['b_one', 'c_three'])
    const allow: ViewLayer = { from: 'project', tools: { a: { allow: ['a_two'] } } }
    expect(names(SessionView.of([allow]))).toEqual(['a_two', 'b_one', 'c_three'])
    const hide: ViewLayer = { from: 'project', tools: { a: { hide: ['one'] }, b: { hide: ['b_one'] } } }
    expect(names(SessionView.of([hide]))).toEqual(['a_two', 'c_three'])
  })

  it('a layer added narrows and never widens: a child listing more connectors than its parent sees no more', () => {
    const parent: ViewLayer = { from: 'flags', connectors: ['a'] }
    const child: ViewLayer = { from: 'flags', connectors: ['a', 'b', 'c'] }
    expect(names(SessionView.of([parent, child]))).toEqual(['a_one', 'a_two'])
    expect(names(SessionView.of([parent, { from: 'flags', hide: ['a'] }]))).toEqual([])
  })

  it('views that see the same have one print; the from of a layer is not part of it', () => {
    const a = SessionView.of([{ from: 'flags', connectors: ['a'] }])
    const b = SessionView.of([{ from: 'project file /x', connectors: ['a'] }])
    const c = SessionView.of([{ from: 'flags', connectors: ['b'] }])
    expect(a.print).toBe(b.print)
    expect(a.print).not.toBe(c.print)
    expect(a.print).not.toBe('')
    // the order things were given in does not make another view
    const ab = SessionView.of([
      { from: 'flags', connectors: ['a', 'b'] },
      { from: 'p', tools: { b: { hide: ['x', 'y'] } } },
    ])
    const ba = SessionView.of([
      { from: 'p', tools: { b: { hide: ['y', 'x'] } } },
      { from: 'flags', connectors: ['b', 'a'] },
    ])
    expect(ab.print).toBe(ba.print)
  })
})

describe('SessionTokens and views', () => {
  it('the view is kept with the record (hashed token), survives a reload, and goes with a revoke', async () => {
    const dir = tempStateDir('session-view')
    try {
      const file = path.join(dir, 'sessions.json')
      const log = createLogger(memorySink([]))
      const tokens = new SessionTokens(file, log)
      await tokens.load()
      const view: ViewLayer[] = [{ from: 'flags', connectors: ['a'] }]
      const token = await tokens.issue('/ws', 's', 'claude', { view })
      const plain = await tokens.issue('/ws', 'p', 'claude')
      const hash = tokens.verify(token)!.hash
      expect(tokens.viewOf(hash).connector('b')).toBe(false)
      expect(tokens.viewOf(tokens.verify(plain)!.hash).whole).toBe(true)
      expect(fs.readFileSync(file, 'utf8')).not.toContain(token)

      const again = new SessionTokens(file, log)
      await again.load()
      expect(again.viewOf(hash).print).toBe(SessionView.of(view).print)
      await again.revoke({ session: 's' })
      expect(again.viewOf(hash).whole).toBe(true)
      expect(again.record(hash)).toBeUndefined()
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
