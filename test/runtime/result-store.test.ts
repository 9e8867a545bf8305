import { afterEach, describe, expect, it, vi } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { daemonResultCap, DEFAULT_MAX_RESULT_BYTES, ResultCaps } from '../../src/runtime/mcpserver/result-caps.js'
import { measuredBytes } from '../../src/runtime/mcpserver/result-size.js'
import { RESULT_URI_PREFIX, ResultStore, type StoredRead } from '../../src/runtime/mcpserver/result-store.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { MCPToolBinding, ToolCallResult } from '../../src/runtime/registry/route.js'

const text = (t: string) => ({ type: 'text', text: t })
const image = (bytes: number) => ({
  type: 'image',
  data: Buffer.alloc(bytes, 2).toString('base64'),
  mimeType: 'image/png',
})

/** Every piece of a stored result, read in order by following each piece's last line. */
function readAll(store: ResultStore, uri: string, session: string): StoredRead[] {
  const pieces: StoredRead[] = []
  let next: string | undefined = uri
  while (next) {
    const piece = store.read(next, session)
    expect(piece, next).toBeDefined()
    pieces.push(piece!)
    const last = piece!.contents.at(-1)!
    next = 'text' in last ? /the next is (tutti:\/\/\S+)\.$/.exec(last.text)?.[1] : undefined
  }
  return pieces
}

describe('ResultStore', () => {
  let store: ResultStore
  afterEach(() => store?.close())

  it('only the session that made the call reads it; any other read is "not there"', () => {
    store = new ResultStore()
    const kept = store.put('session-a', { content: [text('whole')] }, 100, 4096)
    if (!('uri' in kept)) throw new Error('not kept')
    expect(kept.uri).toMatch(/^tutti:\/\/results\/[A-Za-z0-9_-]{22}$/)
    expect(store.read(kept.uri, 'session-a')).toEqual({
      contents: [{ uri: kept.uri, mimeType: 'text/plain', text: 'whole' }],
    })
    expect(store.read(kept.uri, 'session-b')).toBeUndefined()
    expect(store.read(`${RESULT_URI_PREFIX}AAAAAAAAAAAAAAAAAAAAAA`, 'session-a')).toBeUndefined()
    expect(store.read(`${kept.uri}/2`, 'session-a')).toBeUndefined()
    expect(store.read(`${kept.uri}/../x`, 'session-a')).toBeUndefined()
    store.forget(['session-a'])
    expect(store.read(kept.uri, 'session-a')).toBeUndefined()
    expect(store.held).toEqual({ results: 0, bytes: 0 })
  })

  it('ids are unguessable: 128 random bits, never the same', () => {
    store = new ResultStore()
    const uris = new Set(
      Array.from({ length: 200 }, () => (store.put('s', { content: [] }, 10, 4096) as { uri: string }).uri),
    )
    expect(uris.size).toBe(200)
  })

  it('a result expires after the TTL', () => {
    let now = 1_000
    store = new ResultStore({ ttlMs: 60_000, totalBytes: 1e6, sessionBytes: 1e6 }, () => now)
    const { uri } = store.put('s', { content: [text('x')] }, 10, 4096) as { uri: string }
    now += 59_999
    expect(store.read(uri, 's')).toBeDefined()
    now += 1
    expect(store.read(uri, 's')).toBeUndefined()
    expect(store.held.results).toBe(0)
  })

  it('the timer frees expired results without a read, and never holds the process open', async () => {
    vi.useFakeTimers()
    try {
      store = new ResultStore({ ttlMs: 1_000, totalBytes: 1e6, sessionBytes: 1e6 })
      store.put('s', { content: [text('x')] }, 10, 4096)
      expect(store.held.results).toBe(1)
      await vi.advanceTimersByTimeAsync(1_002)
      expect(store.held).toEqual({ results: 0, bytes: 0 })
    } finally {
      vi.useRealTimers()
    }
  })

  it('over the memory cap the oldest results go first; one larger than the whole cap is not kept', () => {
    store = new ResultStore({ ttlMs: 60_000, totalBytes: 1000, sessionBytes: 1000 })
    const put = (bytes: number) => store.put('s', { content: [text(String(bytes))] }, bytes, 4096)
    const first = put(400) as { uri: string }
    const second = put(400) as { uri: string }
    const third = put(400) as { uri: string }
    expect(store.read(first.uri, 's')).toBeUndefined()
    expect(store.read(second.uri, 's')).toBeDefined()
    expect(store.read(third.uri, 's')).toBeDefined()
    expect(store.held).toEqual({ results: 2, bytes: 800 })
    expect(put(1001)).toEqual({ unkept: 'larger than the 0 MiB tutti keeps for a session' })
    expect(store.held.results).toBe(2)
  })

  it('a session over its share drops its own oldest results, never another session’s', () => {
    store = new ResultStore({ ttlMs: 60_000, totalBytes: 1000, sessionBytes: 500 })
    const put = (session: string, bytes: number) =>
      store.put(session, { content: [text(`${session} ${bytes}`)] }, bytes, 4096) as { uri: string }
    const quiet = put('b', 300)
    const flood = [put('a', 200), put('a', 200), put('a', 200), put('a', 200)]
    expect(store.read(quiet.uri, 'b')).toBeDefined()
    expect(flood.map((r) => store.read(r.uri, 'a') !== undefined)).toEqual([false, false, true, true])
    expect(store.held).toEqual({ results: 3, bytes: 700 })
    // past the whole store, the oldest of anyone's go first
    const late = put('c', 400)
    expect(store.read(quiet.uri, 'b')).toBeUndefined()
    expect(store.read(late.uri, 'c')).toBeDefined()
    expect(store.held).toEqual({ results: 3, bytes: 800 })
    store.forget(['a', 'c'])
    expect(store.held).toEqual({ results: 0, bytes: 0 })
    expect(put('b', 600)).toEqual({ unkept: 'larger than the 0 MiB tutti keeps for a session' })
  })

  it('read back in pieces of at most the cap, text split at characters, blobs whole, in order', () => {
    store = new ResultStore()
    const long = 'line é中😀 "q"\n'.repeat(3000)
    const pic = image(6000)
    const result: ToolCallResult = {
      content: [text(long), pic, text('tail'), { type: 'resource_link', uri: 'file:///x', name: 'x' }],
      structuredContent: { n: 1 },
      isError: false,
    }
    const { uri } = store.put('s', result, measuredBytes(result), 4096) as { uri: string }
    const pieces = readAll(store, uri, 's')
    expect(pieces.length).toBeGreaterThan(10)
    const items = pieces.flatMap((p, i) => {
      const at = i === 0 ? uri : `${uri}/${i + 1}`
      for (const item of p.contents) expect(item.uri).toBe(at)
      // each piece within the cap, but the one that carries the 8 KB image alone
      const blob = p.contents.some((c) => 'blob' in c)
      if (blob) expect(p.contents.filter((c) => !('blob' in c) && !c.text.startsWith('[tutti] Piece'))).toEqual([])
      else expect(measuredBytes(p)).toBeLessThanOrEqual(4096)
      return i < pieces.length - 1 ? p.contents.slice(0, -1) : p.contents
    })
    // the text parts, joined, are the text; the image is whole; then the rest, as JSON
    const texts = items
      .filter((c) => 'text' in c && c.mimeType === 'text/plain')
      .map((c) => (c as { text: string }).text)
    expect(texts.join('')).toBe(`${long}tail`)
    for (const t of texts) expect(Buffer.from(t, 'utf8').toString('utf8')).toBe(t)
    expect(items.filter((c) => 'blob' in c)).toEqual([
      { uri: expect.any(String), mimeType: 'image/png', blob: pic.data },
    ])
    const json = items.filter((c) => c.mimeType === 'application/json').map((c) => (c as { text: string }).text)
    expect(json).toEqual(['{"type":"resource_link","uri":"file:///x","name":"x"}', '{"structuredContent":{"n":1}}'])
    expect(pieces[0]!.contents.at(-1)).toEqual({
      uri,
      mimeType: 'text/plain',
      text: `[tutti] Piece 1 of ${pieces.length} of ${uri}; the next is ${uri}/2.`,
    })
    expect(store.read(`${uri}/${pieces.length + 1}`, 's')).toBeUndefined()
    expect(store.read(`${uri}/2`, 'other')).toBeUndefined()
  })
})

describe('ResultCaps', () => {
  const registry = new ConnectorMCPRegistry()
  const client = { callTool: async () => ({ content: [] }) }
  const tools = [
    { name: 't', inputSchema: { type: 'object' } },
    { name: 'typed', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
  ]
  registry.commit(buildRoute('k', 1, client, tools))
  registry.commit({ ...buildRoute('small', 1, client, tools), maxResultBytes: 5000 })
  const binding = (name: string): MCPToolBinding => registry.resolve(name)!

  it('a result under the cap is the same object, and is never serialized to find that out', () => {
    const caps = new ResultCaps(100_000)
    const result = { content: [text('x'.repeat(16_000)), image(3000)], structuredContent: { rows: [1, 2, 3] } }
    // near the cap it is measured (each string asked its UTF-8 length), and still passes whole when it fits
    const near = { content: [text('x'.repeat(99_000))] }
    const stringify = vi.spyOn(JSON, 'stringify')
    const byteLength = vi.spyOn(Buffer, 'byteLength')
    try {
      expect(caps.apply(result, binding('k_t'), 's') === result).toBe(true)
      expect(byteLength).not.toHaveBeenCalled()
      expect(caps.apply(near, binding('k_t'), 's') === near).toBe(true)
      expect(byteLength).toHaveBeenCalledTimes(5) // three keys, two strings
      expect(stringify).not.toHaveBeenCalled()
    } finally {
      stringify.mockRestore()
      byteLength.mockRestore()
    }
    expect(caps.store.held.results).toBe(0)
  })

  it('over the cap: cut, the whole kept for the session; the route’s own cap wins over the daemon’s', () => {
    const caps = new ResultCaps(100_000)
    const result = { content: [text('y'.repeat(20_000))] }
    expect(caps.apply(result, binding('k_t'), 's')).toBe(result)
    const cut = caps.apply(result, binding('small_t'), 's')
    expect(measuredBytes(cut)).toBeLessThanOrEqual(5000)
    const link = (cut.content as Array<{ uri?: string }>).at(-1)!.uri!
    const first = caps.store.read(link, 's')!.contents
    expect(first[0]).toMatchObject({ mimeType: 'text/plain', text: expect.stringMatching(/^y{4000,}$/) })
    expect(first.at(-1)).toMatchObject({ text: expect.stringMatching(/^\[tutti\] Piece 1 of 5 of /) })
    expect(caps.store.held).toEqual({ results: 1, bytes: measuredBytes(result) })
    caps.store.close()
  })

  it('a typed tool’s result without its structuredContent is an error the agent reads', () => {
    const caps = new ResultCaps(100_000)
    const items = Array.from({ length: 2000 }, (_, i) => `row ${i}`)
    const cut = caps.apply({ content: [text('rows')], structuredContent: { items } }, binding('small_typed'), 's')
    expect(cut.isError).toBe(true)
    expect(cut.structuredContent).toBeUndefined()
    caps.store.close()
  })

  it('a result that is not a complete answer is left alone', () => {
    const caps = new ResultCaps(100_000)
    const pending = { content: [text('z'.repeat(10_000))], resultType: 'input_required' }
    expect(caps.apply(pending, binding('small_t'), 's') === pending).toBe(true)
    expect(caps.store.held.results).toBe(0)
  })

  it('a result nested past the stack is measured too, cut to one that serializes, and read back', () => {
    const caps = new ResultCaps(100_000)
    let deep: unknown = 'bottom'
    for (let i = 0; i < 100_000; i++) deep = { deep }
    const nested = { content: [text('deep')], structuredContent: deep as Record<string, unknown> }
    expect(() => JSON.stringify(nested)).toThrow(RangeError)
    const cut = caps.apply(nested, binding('small_t'), 's')
    expect(JSON.stringify(cut).length).toBeLessThan(5000)
    expect(cut.structuredContent === undefined).toBe(true)
    const link = (cut.content as Array<{ uri?: string }>).at(-1)!.uri!
    expect(caps.store.read(link, 's')!.contents.map((c) => ('text' in c ? c.text.slice(0, 52) : c))).toEqual([
      'deep',
      '[tutti] This part could not be written as JSON: Maxi',
    ])
    caps.store.close()
  })

  it('without a session nothing is kept, and the note says so', () => {
    const caps = new ResultCaps(100_000)
    const cut = caps.apply({ content: [text('w'.repeat(20_000))] }, binding('small_t'), undefined)
    expect((cut.content as Array<{ text?: string }>)[0]!.text).toContain('could not be kept (no session)')
    expect(caps.store.held.results).toBe(0)
  })
})

describe('TUTTI_MAX_RESULT_BYTES', () => {
  it('a whole number from 4096 to 16 MiB; anything else is logged and the default applies', () => {
    const lines: string[] = []
    const log = createLogger(memorySink(lines), undefined, 'mcp', 'debug')
    expect(daemonResultCap({}, log)).toBe(DEFAULT_MAX_RESULT_BYTES)
    expect(daemonResultCap({ TUTTI_MAX_RESULT_BYTES: '250000' }, log)).toBe(250_000)
    expect(daemonResultCap({ TUTTI_MAX_RESULT_BYTES: String(16 * 1024 * 1024) }, log)).toBe(16 * 1024 * 1024)
    expect(lines).toEqual([])
    for (const bad of ['4095', '16777217', '1e6', '-5', '100k', ' 5000'])
      expect(daemonResultCap({ TUTTI_MAX_RESULT_BYTES: bad }, log)).toBe(DEFAULT_MAX_RESULT_BYTES)
    expect(lines).toHaveLength(6)
    expect(lines[0]).toContain('TUTTI_MAX_RESULT_BYTES is not a whole number of bytes from 4096 to 16777216')
  })
})
