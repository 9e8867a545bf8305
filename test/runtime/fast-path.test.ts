import type { HTTPResponse } from 'h3'
import { describe, expect, it } from 'vitest'
import { classifyMcpRequest } from '../../src/runtime/mcpserver/classify.js'
import { FastPath } from '../../src/runtime/mcpserver/fast-path.js'
import { LegacyCancellation } from '../../src/runtime/mcpserver/legacy-cancellation.js'
import { ToolService, type ToolOutcome } from '../../src/runtime/mcpserver/tool-service.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { ToolCallResult } from '../../src/runtime/registry/route.js'
import { SessionView } from '../../src/runtime/sessions/session-view.js'

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
const registry = new ConnectorMCPRegistry()
let answer: (args: Record<string, unknown> | undefined) => Promise<ToolCallResult> = async (args) => ({
  content: [{ type: 'text', text: String(JSON.stringify(args)) }],
})
let upstreamCalls = 0
const client = {
  callTool: (_n: string, args: Record<string, unknown> | undefined) => {
    upstreamCalls++
    return answer(args)
  },
}
registry.commit(buildRoute('k', 1, client, [{ name: 't', inputSchema: { type: 'object' } }]))
const fast = new FastPath(new ToolService(registry, new LegacyCancellation()))

/** What the SDK was handed to encode, when the fast path made the call but left the answer to it. */
const encoded: ToolOutcome[] = []
const sdk = async (settled: ToolOutcome) => {
  encoded.push(settled)
  return new Response('from the SDK')
}

const modernHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'k_t',
}
const modernBody = () =>
  ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'k_t', arguments: { a: 1 }, _meta: { ...META } },
  }) as Record<string, any>
const req = (headers: Record<string, string>) =>
  new Request('http://127.0.0.1/mcp/connector', { method: 'POST', headers })
const tryHandle = (body: Record<string, any>, headers: Record<string, string>) =>
  fast.tryHandle(
    classifyMcpRequest(body, new Headers(headers), registry, SessionView.WHOLE),
    body,
    req(headers),
    'session-hash',
    SessionView.WHOLE,
    sdk,
  )

describe('fast path', () => {
  it('serves an exactly-right modern call with resultType and serverInfo', async () => {
    const res = (await tryHandle(modernBody(), modernHeaders)) as HTTPResponse
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.body as string)))
    expect(JSON.parse(res.body as string)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [{ type: 'text', text: '{"a":1}' }],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'connector', version: expect.any(String) } },
      },
    })
  })

  it('serves an exactly-right 2025-06-18 call as one SSE message', async () => {
    const res = (await tryHandle(
      { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'k_t' } },
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
    )) as HTTPResponse
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    expect(res.body).toBe(
      'event: message\ndata: {"result":{"content":[{"type":"text","text":"undefined"}]},"jsonrpc":"2.0","id":"x"}\n\n',
    )
  })

  it('an error, or a result the SDK would normalize, is made once here and encoded by the SDK', async () => {
    const results: Array<[string, () => Promise<ToolCallResult>]> = [
      ['an upstream error', async () => Promise.reject(Object.assign(new Error('nope'), { code: -32002 }))],
      ['a result without content', async () => ({ structuredContent: { a: 1 } }) as unknown as ToolCallResult],
      ['a result that names its resultType', async () => ({ content: [], resultType: 'complete' })],
    ]
    for (const [label, result] of results) {
      answer = result
      encoded.length = 0
      const before = upstreamCalls
      const res = (await tryHandle(modernBody(), modernHeaders)) as Response
      expect(await res.text(), label).toBe('from the SDK')
      expect(upstreamCalls - before, label).toBe(1)
      expect(encoded, label).toHaveLength(1)
    }
    expect(encoded[0]).toMatchObject({ ok: true, result: { resultType: 'complete' } })
    answer = async (args) => ({ content: [{ type: 'text', text: String(JSON.stringify(args)) }] })
  })

  const defer: Array<[string, (b: Record<string, any>, h: Record<string, string>) => void]> = [
    ['an extra _meta key', (b) => (b.params._meta.progressToken = 1)],
    ['a missing clientCapabilities', (b) => delete b.params._meta['io.modelcontextprotocol/clientCapabilities']],
    [
      'a non-object capability',
      (b) => (b.params._meta['io.modelcontextprotocol/clientCapabilities'] = { sampling: 'yes' }),
    ],
    ['an incomplete clientInfo', (b) => (b.params._meta['io.modelcontextprotocol/clientInfo'] = { name: 'x' })],
    ['another protocol version', (b) => (b.params._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01')],
    ['a missing Mcp-Name', (_b, h) => delete h['mcp-name']],
    ['a base64 Mcp-Name', (_b, h) => (h['mcp-name'] = '=?base64?a190?=')],
    ['an Mcp-Method mismatch', (_b, h) => (h['mcp-method'] = 'tools/list')],
    ['a header version mismatch', (_b, h) => (h['mcp-protocol-version'] = '2025-06-18')],
    ['no version header', (_b, h) => delete h['mcp-protocol-version']],
    ['no JSON in Accept', (_b, h) => (h.accept = 'text/event-stream')],
    ['another content type', (_b, h) => (h['content-type'] = 'text/plain')],
    ['an unknown tool', (b, h) => ((b.params.name = 'k_nope'), (h['mcp-name'] = 'k_nope'))],
    ['a fractional id', (b) => (b.id = 1.5)],
    ['a null id', (b) => (b.id = null)],
    ['an extra envelope key', (b) => (b.extra = true)],
    ['an extra params key', (b) => (b.params.task = {})],
    ['non-object arguments', (b) => (b.params.arguments = [1])],
    ['another method', (b, h) => ((b.method = 'resources/list'), (h['mcp-method'] = 'resources/list'))],
  ]
  it.each(defer)('defers to the SDK on %s, without calling anything', (_label, mutate) => {
    const body = modernBody()
    const headers = { ...modernHeaders }
    mutate(body, headers)
    const before = upstreamCalls
    expect(tryHandle(body, headers)).toBeUndefined()
    expect(upstreamCalls).toBe(before)
  })

  it(
    'defers a 2025 call without the version header, ' + 'with a tolerated one, with _meta, or without SSE in Accept',
    () => {
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'k_t' } }
      const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
      expect(tryHandle(body, h)).toBeUndefined()
      expect(tryHandle(body, { ...h, 'mcp-protocol-version': '2025-11-25' })).toBeUndefined()
      expect(
        tryHandle(
          { ...body, params: { name: 'k_t', _meta: { progressToken: 1 } } },
          { ...h, 'mcp-protocol-version': '2025-06-18' },
        ),
      ).toBeUndefined()
      expect(
        tryHandle(body, { ...h, accept: 'application/json', 'mcp-protocol-version': '2025-06-18' }),
      ).toBeUndefined()
    },
  )

  it('serves tools/list from one serialized snapshot until the registry changes', async () => {
    const h: Record<string, string> = { ...modernHeaders, 'mcp-method': 'tools/list' }
    delete h['mcp-name']
    const list = () =>
      JSON.parse(
        (tryHandle({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { ...META } } }, h) as HTTPResponse)
          .body as string,
      )
    expect(list().result).toMatchObject({
      tools: [{ name: 'k_t', inputSchema: { type: 'object' } }],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
    })
    registry.commit(
      buildRoute('k', 2, client, [
        { name: 't', inputSchema: { type: 'object' } },
        { name: 'u', inputSchema: { type: 'object' } },
      ]),
    )
    expect(list().result.tools.map((t: { name: string }) => t.name)).toEqual(['k_t', 'k_u'])
    expect(
      tryHandle({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: 'x', _meta: { ...META } } }, h),
    ).toBeUndefined()
  })
})
