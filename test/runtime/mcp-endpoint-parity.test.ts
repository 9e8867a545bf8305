import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CAP_BYTES,
  legacy,
  MODERN_META,
  modern,
  RESULT_URI,
  SDK_META,
  startEndpoint,
  withoutResultIds,
  type Answer,
  type Harness,
} from './mcp-endpoint-harness.js'

// tools/call and tools/list are served by the fast path when the request is
// exactly right, and by the SDK otherwise. A client must not be able to tell
// them apart: same status, same headers, same bytes.
let h: Harness
beforeAll(async () => {
  h = await startEndpoint({ caps: true })
})
afterAll(async () => {
  await h.close()
})

/** Headers a client can tell apart. Node adds Connection and Content-Length itself on the wire. */
function visibleHeaders(a: Answer): Record<string, string> {
  return Object.fromEntries([...a.headers].filter(([k]) => k !== 'content-length' && k !== 'connection'))
}

/** The same bytes; a cut result's link names the call's own stored result, so only its id may differ. */
function expectSameAnswer(fast: Answer, sdk: Answer): void {
  expect(sdk.fast).toBe(false)
  expect(fast.status).toBe(sdk.status)
  expect(visibleHeaders(fast)).toEqual(visibleHeaders(sdk))
  expect(fast.text.length).toBe(sdk.text.length)
  expect(withoutResultIds(fast.text)).toBe(withoutResultIds(sdk.text))
}

/** Each request reaches the upstream exactly once, whichever path encodes its answer. */
async function once<T>(fn: () => Promise<T>): Promise<T> {
  const before = h.upstream.calls.length
  const out = await fn()
  expect(h.upstream.calls.length - before).toBe(1)
  return out
}

// [tool, arguments, encoded by the fast path itself?]
const CALLS: Array<[string, Record<string, unknown>, boolean]> = [
  ['echo', { message: 'same either way' }, true],
  ['structured', {}, true],
  ['fail', {}, true],
  // over the daemon's default cap (100,000 bytes): cut, with a link
  ['big', { bytes: 3 * 1024 * 1024 }, true],
  ['meta', {}, true],
  ['bare', {}, false],
  ['deep', {}, false],
  ['broken', {}, false],
  ['reject', { code: -32602 }, false],
  ['reject', { code: -32000 }, false],
  ['reject', { code: -32603 }, false],
  ['reject', { code: -32021 }, false],
  ['reject', { code: -32002 }, false],
  ['reject', { code: -32042 }, false],
]

describe('2026-07-28: fast path and SDK path give the same answer', () => {
  it.each(CALLS)('tools/call %s %j', async (tool, args, encodedFast) => {
    const name = `fx_${tool}`
    const fast = await once(() => modern(h, 'tools/call', { name, arguments: args }))
    const sdk = await once(() => modern(h, 'tools/call', { name, arguments: args, _meta: SDK_META }))
    expect(fast.fast).toBe(encodedFast)
    expectSameAnswer(fast, sdk)
  })

  it('what the SDK does on this wire: -32021 is HTTP 400, retired codes are mapped, -32042 is explained', async () => {
    const call = (code: number) => modern(h, 'tools/call', { name: 'fx_reject', arguments: { code } })
    const missing = await call(-32021)
    expect(missing.status).toBe(400)
    expect(missing.json.error).toEqual({ code: -32021, message: 'rejected with -32021', data: { code: -32021 } })
    expect((await call(-32002)).json.error.code).toBe(-32602)
    const url = await call(-32042)
    expect(url.status).toBe(200)
    expect(url.json.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^URL elicitation cannot be signalled .* on protocol revision 2026-07-28/),
    })
  })

  it('a result stamped with the upstream identity carries connector’s own', async () => {
    const res = await modern(h, 'tools/call', { name: 'fx_meta', arguments: {} })
    expect(res.json.result._meta).toEqual({
      trace: 'abc',
      'io.modelcontextprotocol/serverInfo': { name: 'connector', version: expect.any(String) },
    })
  })

  it('a result nested past the stack is a -32603 naming the connector', async () => {
    const res = await modern(h, 'tools/call', { name: 'fx_deep', arguments: {} })
    expect(res.json.error).toEqual({
      code: -32603,
      message: expect.stringMatching(/^connector "fx": the tool result could not be serialized/),
      data: { connector: 'fx' },
    })
  })

  it('an unknown tool: the same error either way, and nothing is called', async () => {
    const before = h.upstream.calls.length
    const fast = await modern(h, 'tools/call', { name: 'fx_nope', arguments: {} })
    const sdk = await modern(h, 'tools/call', { name: 'fx_nope', arguments: {}, _meta: SDK_META })
    expectSameAnswer(fast, sdk)
    expect(fast.json.error.code).toBe(-32602)
    const legacyFast = await legacy(h, { id: 5, method: 'tools/call', params: { name: 'fx_nope', arguments: {} } })
    expectSameAnswer(
      legacyFast,
      await legacy(h, { id: 5, method: 'tools/call', params: { name: 'fx_nope', arguments: {} } }, false),
    )
    expect(h.upstream.calls.length).toBe(before)
  })

  it.each([
    ['an empty clientInfo', { 'io.modelcontextprotocol/clientInfo': {} }],
    ['a non-object capability', { 'io.modelcontextprotocol/clientCapabilities': { sampling: 'yes' } }],
  ])('with %s: the same answer either way', async (_label, metaPatch) => {
    const params = { name: 'fx_echo', arguments: { message: 'm' } }
    const fast = await modern(h, 'tools/call', { ...params, _meta: { ...MODERN_META, ...metaPatch } })
    const sdk = await modern(h, 'tools/call', { ...params, _meta: { ...SDK_META, ...metaPatch } })
    expectSameAnswer(fast, sdk)
  })

  it('tools/list: the same bytes, one serialized snapshot', async () => {
    const fast = await modern(h, 'tools/list')
    const sdk = await modern(h, 'tools/list', { _meta: SDK_META })
    expect(fast.fast).toBe(true)
    expect(fast.json.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' })
    expect(fast.json.result.tools.map((t: { name: string }) => t.name)).toContain('fx_structured')
    expectSameAnswer(fast, sdk)
  })
})

describe('2025-06-18: fast path and SDK path give the same SSE frame', () => {
  it.each(CALLS)('tools/call %s %j', async (tool, args, encodedFast) => {
    const message = { id: 5, method: 'tools/call', params: { name: `fx_${tool}`, arguments: args } }
    const fast = await once(() => legacy(h, message))
    // without the version header (allowed in 2025) the request takes the SDK path
    const sdk = await once(() => legacy(h, message, false))
    expect(fast.fast).toBe(encodedFast)
    expect(fast.headers.get('content-type')).toBe('text/event-stream')
    expectSameAnswer(fast, sdk)
  })

  it('codes pass through as the SDK sends them on this wire (-32021 is in-band, -32042 stays)', async () => {
    const call = (code: number) =>
      legacy(h, { id: 6, method: 'tools/call', params: { name: 'fx_reject', arguments: { code } } })
    const missing = await call(-32021)
    expect(missing.status).toBe(200)
    expect(missing.json.error.code).toBe(-32021)
    expect((await call(-32042)).json.error.code).toBe(-32042)
  })

  it('tools/list: the same bytes', async () => {
    const fast = await legacy(h, { id: 3, method: 'tools/list' })
    const sdk = await legacy(h, { id: 3, method: 'tools/list' }, false)
    expect(fast.fast).toBe(true)
    expectSameAnswer(fast, sdk)
  })
})

// over the cx connector's cap (CAP_BYTES): text cut, images left out, an embedded resource cut, a typed tool's
// structuredContent left out (and the result an error), multi-byte text cut at a character
const CUT: Array<[string, Record<string, unknown>]> = [
  ['cx_pictures', { bytes: 6000 }],
  ['cx_typed', { count: 400 }],
  ['cx_accents', { repeat: 2000 }],
  ['fx_big', { bytes: 3 * 1024 * 1024 }],
]

describe('a cut result: the same bytes on both paths, in both eras, but for its id', () => {
  it.each(CUT)('%s %j', async (name, args) => {
    const fast = await once(() => modern(h, 'tools/call', { name, arguments: args }))
    const sdk = await once(() => modern(h, 'tools/call', { name, arguments: args, _meta: SDK_META }))
    expect(fast.fast).toBe(true)
    expectSameAnswer(fast, sdk)
    expect(fast.json.result.content[0].text).toMatch(/^\[tutti\] This tool result is [\d,]+ bytes, over the cap/)
    expect(fast.json.result.content.at(-1)).toMatchObject({
      type: 'resource_link',
      uri: expect.stringMatching(RESULT_URI),
    })
    // two calls, two stored results
    expect(fast.json.result.content.at(-1).uri).not.toBe(sdk.json.result.content.at(-1).uri)

    const message = { id: 7, method: 'tools/call', params: { name, arguments: args } }
    const legacyFast = await once(() => legacy(h, message))
    const legacySdk = await once(() => legacy(h, message, false))
    expect(legacyFast.fast).toBe(true)
    expectSameAnswer(legacyFast, legacySdk)
    // the result as it came, before 2026-07-28 stamps it: within the cap
    const cap = name.startsWith('cx_') ? CAP_BYTES : 100_000
    expect(Buffer.byteLength(JSON.stringify(legacyFast.json.result))).toBeLessThanOrEqual(cap)
    expect(Buffer.byteLength(JSON.stringify(legacyFast.json.result))).toBeGreaterThan(cap - 2000)
  })
})

describe('one classification a request', () => {
  it('the binding is resolved once, on either path, in either era', async () => {
    const resolve = h.registry.resolve.bind(h.registry)
    let resolved = 0
    h.registry.resolve = (name) => (resolved++, resolve(name))
    try {
      const params = { name: 'fx_echo', arguments: { message: 'x' } }
      for (const send of [
        () => modern(h, 'tools/call', params),
        () => modern(h, 'tools/call', { ...params, _meta: SDK_META }),
        () => modern(h, 'tools/call', { name: 'fx_reject', arguments: { code: -32602 } }),
        () => legacy(h, { id: 1, method: 'tools/call', params }),
        () => legacy(h, { id: 1, method: 'tools/call', params }, false),
      ]) {
        resolved = 0
        expect((await send()).status).toBe(200)
        expect(resolved).toBe(1)
      }
    } finally {
      h.registry.resolve = resolve
    }
  })
})
