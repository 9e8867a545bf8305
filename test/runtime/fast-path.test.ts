import type { HTTPResponse } from 'h3'
import { describe, expect, it } from 'vitest'
import { LegacyCancellation } from '../../src/runtime/mcpserver/legacy-cancellation.js'
import { FastPath } from '../../src/runtime/mcpserver/fast-path.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const registry = new ConnectorMCPRegistry()
registry.commit(buildRoute('k', 1, { callTool: async (_n, args) => ({ content: [{ type: 'text', text: String(JSON.stringify(args)) }] }) }, [{ name: 't', inputSchema: { type: 'object' } }]))
const fast = new FastPath(registry, new LegacyCancellation())

const modernHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'k_t' }
const modernBody = () => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'k_t', arguments: { a: 1 }, _meta: { ...META } } }) as Record<string, any>
const req = (headers: Record<string, string>) => new Request('http://127.0.0.1/mcp/connector', { method: 'POST', headers })

describe('fast path', () => {
  it('serves an exactly-right modern call with resultType and serverInfo', async () => {
    const res = await fast.tryHandle(modernBody(), req(modernHeaders), 's')!
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.body as string)))
    expect(JSON.parse(res.body as string)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: '{"a":1}' }], resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'connector', version: expect.any(String) } } },
    })
  })

  it('serves an exactly-right 2025-06-18 call as one SSE message', async () => {
    const res = await fast.tryHandle({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'k_t' } }, req({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }), 's')!
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    expect(res.body).toBe('event: message\ndata: {"result":{"content":[{"type":"text","text":"undefined"}]},"jsonrpc":"2.0","id":"x"}\n\n')
  })

  const defer: Array<[string, (b: Record<string, any>, h: Record<string, string>) => void]> = [
    ['an extra _meta key', (b) => (b.params._meta.progressToken = 1)],
    ['a missing clientCapabilities', (b) => delete b.params._meta['io.modelcontextprotocol/clientCapabilities']],
    ['another protocol version', (b) => (b.params._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01')],
    ['a missing Mcp-Name', (_b, h) => delete h['mcp-name']],
    ['a base64 Mcp-Name', (_b, h) => (h['mcp-name'] = '=?base64?a190?=')],
    ['an Mcp-Method mismatch', (_b, h) => (h['mcp-method'] = 'tools/list')],
    ['a header version mismatch', (_b, h) => (h['mcp-protocol-version'] = '2025-06-18')],
    ['no JSON in Accept', (_b, h) => (h.accept = 'text/event-stream')],
    ['another content type', (_b, h) => (h['content-type'] = 'text/plain')],
    ['an unknown tool', (b, h) => ((b.params.name = 'k_nope'), (h['mcp-name'] = 'k_nope'))],
    ['a fractional id', (b) => (b.id = 1.5)],
    ['a null id', (b) => (b.id = null)],
    ['an extra params key', (b) => (b.params.task = {})],
    ['non-object arguments', (b) => (b.params.arguments = [1])],
    ['another method', (b) => (b.method = 'resources/list')],
  ]
  it.each(defer)('defers to the SDK on %s', (_label, mutate) => {
    const body = modernBody()
    const headers = { ...modernHeaders }
    mutate(body, headers)
    expect(fast.tryHandle(body, req(headers), 's')).toBeUndefined()
  })

  it('defers a 2025 call without the version header or without SSE in Accept', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'k_t' } }
    expect(fast.tryHandle(body, req({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }), 's')).toBeUndefined()
    expect(fast.tryHandle(body, req({ 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2025-06-18' }), 's')).toBeUndefined()
  })

  it('serves tools/list from one serialized snapshot until the registry changes', async () => {
    const h = { ...modernHeaders, 'mcp-method': 'tools/list' }
    delete (h as Record<string, string>)['mcp-name']
    const list = () => JSON.parse((fast.tryHandle({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { ...META } } }, req(h), 's') as HTTPResponse).body as string)
    expect(list().result).toMatchObject({ tools: [{ name: 'k_t', inputSchema: { type: 'object' } }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' })
    registry.commit(buildRoute('k', 2, { callTool: async () => ({ content: [] }) }, [{ name: 't', inputSchema: { type: 'object' } }, { name: 'u', inputSchema: { type: 'object' } }]))
    expect(list().result.tools.map((t: { name: string }) => t.name)).toEqual(['k_t', 'k_u'])
    expect(fast.tryHandle({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: 'x', _meta: { ...META } } }, req(h), 's')).toBeUndefined()
  })
})
