import { describe, expect, it, vi } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { classifyMcpRequest } from '../../src/runtime/mcpserver/classify.js'
import { CallCancel } from '../../src/runtime/registry/call-cancel.js'
import { LegacyCancellation } from '../../src/runtime/mcpserver/legacy-cancellation.js'
import { ListChangedNotifier } from '../../src/runtime/mcpserver/list-changed-notifier.js'
import { ListenStreams } from '../../src/runtime/mcpserver/listen-streams.js'
import { decodeHeaderValue as decodeParamValue } from '../../src/runtime/mcp-wire.js'
import { checkParamHeaders } from '../../src/runtime/mcpserver/param-headers.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import { SessionView } from '../../src/runtime/sessions/session-view.js'

describe('Mcp-Param headers', () => {
  const params = [
    { path: ['region'], header: 'Region', type: 'string' as const },
    { path: ['opts', 'limit'], header: 'Limit', type: 'integer' as const },
    { path: ['dry'], header: 'Dry', type: 'boolean' as const },
  ]
  const h = (o: Record<string, string>) => new Headers(o)

  it('decodes the base64 sentinel, takes anything else literally', () => {
    expect(decodeParamValue('=?base64?SGVsbG8=?=')).toBe('Hello')
    expect(decodeParamValue('SGVsbG8=')).toBe('SGVsbG8=')
    expect(decodeParamValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=')
    expect(decodeParamValue('=?base64?SGVsbG8?=')).toBeUndefined()
    expect(decodeParamValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined()
    expect(decodeParamValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`)).toBeUndefined()
  })

  it('matching headers pass; integers compare numerically; absent values expect no header', () => {
    expect(
      checkParamHeaders(
        params,
        { region: 'us', opts: { limit: 42 }, dry: false },
        h({ 'mcp-param-region': 'us', 'mcp-param-limit': '42.0', 'mcp-param-dry': 'false' }),
      ),
    ).toBeUndefined()
    expect(checkParamHeaders(params, { region: null }, h({}))).toBeUndefined()
  })

  it('missing, undecodable and different values are named', () => {
    expect(checkParamHeaders(params, { region: 'us' }, h({}))).toEqual({
      header: 'Mcp-Param-Region',
      body: 'us',
      problem: 'param-header-missing',
    })
    expect(checkParamHeaders(params, { region: 'us' }, h({ 'mcp-param-region': 'eu' }))?.problem).toBe(
      'param-header-mismatch',
    )
    expect(checkParamHeaders(params, { opts: { limit: 1 } }, h({ 'mcp-param-limit': '2' }))?.problem).toBe(
      'param-header-mismatch',
    )
    expect(checkParamHeaders(params, { opts: { limit: 1 } }, h({ 'mcp-param-limit': '' }))?.problem).toBe(
      'param-header-mismatch',
    )
    expect(checkParamHeaders(params, { dry: true }, h({ 'mcp-param-dry': 'TRUE' }))?.problem).toBe(
      'param-header-mismatch',
    )
    expect(checkParamHeaders(params, { region: 'us' }, h({ 'mcp-param-region': '=?base64?***?=' }))?.problem).toBe(
      'param-header-invalid-encoding',
    )
  })
})

describe('ListChangedNotifier', () => {
  // fake timers: the window is the notifier's own timer, so nothing here depends on the machine's speed
  it('a burst of changes gives one notification', () => {
    vi.useFakeTimers()
    try {
      let sent = 0
      const n = new ListChangedNotifier(() => sent++, 10)
      for (let i = 0; i < 20; i++) n.changed()
      vi.advanceTimersByTime(9)
      expect(sent).toBe(0)
      vi.advanceTimersByTime(1)
      expect(sent).toBe(1)
      vi.advanceTimersByTime(1000)
      expect(sent).toBe(1)
      n.changed()
      vi.advanceTimersByTime(10)
      expect(sent).toBe(2)
      n.changed()
      n.dispose()
      vi.advanceTimersByTime(1000)
      expect(sent).toBe(2)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('LegacyCancellation', () => {
  it('a cancel aborts exactly the registered call of that session (by token hash)', () => {
    const c = new LegacyCancellation()
    const [callA, callB, callC] = [new CallCancel(), new CallCancel(), new CallCancel()]
    const a = c.register('hash-1', 7, callA)
    const b = c.register('hash-2', 7, callB)
    const s = c.register('hash-1', '7', callC)
    expect(c.size).toBe(3)
    expect(c.cancel('hash-1', 8, 'x')).toBe(false)
    expect(c.cancel('hash-1', 7, 'bye')).toBe(true)
    expect(callA.cancelled).toBe(true)
    // ids keep their JSON type: "7" is another call than 7
    expect(callC.cancelled).toBe(false)
    expect(callB.cancelled).toBe(false)
    // a later call under the same id is not forgotten by the earlier call's done
    const again = new CallCancel()
    c.register('hash-1', 7, again)
    a.done()
    expect(c.cancel('hash-1', 7, 'second')).toBe(true)
    expect(again.cancelled).toBe(true)
    b.done()
    s.done()
    c.register('hash-1', 7, again).done()
    expect(c.size).toBe(0)
  })
})

describe('ListenStreams', () => {
  it('closing a session ends its tracked streams only', async () => {
    const streams = new ListenStreams(createLogger(memorySink([])))
    const open = () =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode(': hi\n\n')) }), {
        headers: { 'content-type': 'text/event-stream' },
      })
    expect(streams.reserve('h1', 1)).toBeUndefined()
    expect(streams.reserve('h2', 2)).toBeUndefined()
    const mine = streams.track('h1', open())
    const theirs = streams.track('h2', open())
    expect(streams.size).toBe(2)
    expect(streams.closeSessions(['h1'])).toBe(1)
    const reader = mine.body!.getReader()
    let done = false
    for (let i = 0; i < 3 && !done; i++) done = (await reader.read()).done
    expect(done).toBe(true)
    expect(streams.size).toBe(1)
    expect(theirs.status).toBe(200)
  })

  it('past a cap (per session, then overall) a stream is refused 429 naming it; one ended frees a place', async () => {
    const streams = new ListenStreams(createLogger(memorySink([])), { perSession: 2, overall: 3 })
    const open = () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode(': hi\n')) }))
    expect(streams.reserve('h1', 1)).toBeUndefined()
    const first = streams.track('h1', open())
    expect(streams.reserve('h1', 2)).toBeUndefined()
    streams.release('h1')
    expect(streams.reserve('h1', 3)).toBeUndefined()
    streams.track('h1', open())
    const mine = streams.reserve('h1', 4)!
    expect(mine.status).toBe(429)
    const refused = { id: 4, error: { code: -32000, data: { limit: 'listenStreamsPerSession', max: 2 } } }
    expect(await mine.json()).toMatchObject(refused)
    expect(streams.reserve('h2', 5)).toBeUndefined()
    const overall = (await streams.reserve('h3', 6)!.json()) as { error: { message: string } }
    expect(overall).toMatchObject({ id: 6, error: { data: { limit: 'listenStreams', max: 3 } } })
    expect(overall.error.message).toContain('the daemon has 3 listen streams open')
    await first.body!.cancel()
    expect(streams.reserve('h3', 7)).toBeUndefined()
  })
})

describe('classifyMcpRequest', () => {
  const registry = new ConnectorMCPRegistry()
  registry.commit(
    buildRoute('k', 1, { callTool: async () => ({ content: [] }) }, [{ name: 't', inputSchema: { type: 'object' } }]),
  )
  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  const call = (params: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'k_t', ...params },
  })
  const headers = (h: Record<string, string> = {}) => new Headers(h)

  it("the era is the SDK classifier's; a tools/call of a known tool carries its binding", () => {
    const modern = classifyMcpRequest(
      call({ _meta: META }),
      headers({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }),
      registry,
      SessionView.WHOLE,
    )
    expect(modern).toMatchObject({
      era: 'modern',
      method: 'tools/call',
      binding: { connectorKey: 'k', tool: { upstreamName: 't' } },
    })
    expect(classifyMcpRequest(call({}), headers(), registry, SessionView.WHOLE)).toMatchObject({
      era: 'legacy',
      method: 'tools/call',
      binding: { connectorKey: 'k' },
    })
    const init = classifyMcpRequest(
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } },
      headers(),
      registry,
      SessionView.WHOLE,
    )
    expect(init).toMatchObject({
      era: 'legacy',
      method: 'initialize',
      binding: undefined,
      outcome: { kind: 'legacy', reason: 'initialize' },
    })
  })

  it("a tool the session's view hides has no binding: it is unknown to that session", () => {
    const other = SessionView.of([{ from: 'flags', connectors: ['other'] }])
    const hidden = SessionView.of([{ from: 'project', tools: { k: { hide: ['t'] } } }])
    const seeing = SessionView.of([{ from: 'flags', connectors: ['k'] }])
    expect(classifyMcpRequest(call({}), headers(), registry, other).binding).toBeUndefined()
    expect(classifyMcpRequest(call({}), headers(), registry, hidden).binding).toBeUndefined()
    expect(classifyMcpRequest(call({}), headers(), registry, seeing).binding).toMatchObject({ connectorKey: 'k' })
  })

  it('an unknown tool has no binding; a refused request has no era and resolves nothing', () => {
    expect(classifyMcpRequest(call({ name: 'k_nope' }), headers(), registry, SessionView.WHOLE).binding).toBeUndefined()
    const refused = classifyMcpRequest(
      call({ _meta: META }),
      headers({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }),
      registry,
      SessionView.WHOLE,
    )
    expect(refused).toMatchObject({ era: undefined, binding: undefined, outcome: { kind: 'reject', code: -32020 } })
  })
})
