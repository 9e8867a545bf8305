import { classifyInboundRequest } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { classifyMcpRequest, plainEra } from '../../src/runtime/mcpserver/classify.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import { SessionView } from '../../src/runtime/sessions/session-view.js'

// A plain request's era is decided without the SDK's classifier; it must be
// the era the SDK decides for the same request, every time.
const sdkEra = (body: Record<string, unknown>, headers: Headers) => {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: headers.get('mcp-protocol-version') ?? undefined,
    mcpMethodHeader: headers.get('mcp-method') ?? undefined,
    mcpNameHeader: headers.get('mcp-name') ?? undefined,
    body,
  })
  return outcome.kind === 'reject' ? undefined : outcome.kind
}

const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const ids: unknown[] = [1, 0, -7, 'x', '']
const argsVariants: unknown[] = [undefined, {}, { message: 'm', nested: { a: [1] } }]
const capsVariants: Array<Record<string, unknown>> = [
  {},
  { roots: {} },
  { sampling: {} },
  { elicitation: {} },
  { experimental: {} },
  { tasks: {} },
  { extensions: {} },
  { 'x-vendor': {} },
  { roots: {}, sampling: {}, elicitation: {}, tasks: {} },
]
const infoVariants: unknown[] = [undefined, { name: 'raw', version: '1' }]

function* plainRequests(): Generator<[string, Record<string, unknown>, Record<string, string>]> {
  for (const id of ids) {
    for (const args of argsVariants) {
      const params = args === undefined ? { name: 'k_t' } : { name: 'k_t', arguments: args }
      yield [
        'legacy call',
        { jsonrpc: '2.0', id, method: 'tools/call', params },
        { ...base, 'mcp-protocol-version': '2025-06-18' },
      ]
      for (const caps of capsVariants)
        for (const info of infoVariants) {
          const _meta = {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': caps,
            ...(info ? { 'io.modelcontextprotocol/clientInfo': info } : {}),
          }
          yield [
            'modern call',
            { jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta } },
            { ...base, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'k_t' },
          ]
          yield [
            'modern list',
            { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta } },
            { ...base, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
          ]
        }
    }
    yield [
      'legacy list',
      { jsonrpc: '2.0', id, method: 'tools/list' },
      { ...base, 'mcp-protocol-version': '2025-06-18' },
    ]
    yield [
      'legacy list {}',
      { jsonrpc: '2.0', id, method: 'tools/list', params: {} },
      { ...base, 'mcp-protocol-version': '2025-06-18' },
    ]
  }
}

describe('plainEra', () => {
  it('every plain request gets the era the SDK classifier gives it', () => {
    let plain = 0
    for (const [label, body, h] of plainRequests()) {
      const headers = new Headers(h)
      const era = plainEra(body, headers)
      expect(era, `${label} ${JSON.stringify(body)}`).toBe(label.startsWith('legacy') ? 'legacy' : 'modern')
      expect(sdkEra(body, headers), `${label} ${JSON.stringify(body)}`).toBe(era)
      plain++
    }
    expect(plain).toBeGreaterThan(500)
  })

  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  const modern = { ...base, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }
  it.each([
    [
      'a capability the SDK schema may refuse',
      { ...META, 'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: 'yes' } } },
    ],
    ['a non-empty capability', { ...META, 'io.modelcontextprotocol/clientCapabilities': { sampling: { tools: {} } } }],
    [
      'a clientInfo with more than name and version',
      { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'n', version: '1', title: 5 } },
    ],
    ['a logLevel', { ...META, 'io.modelcontextprotocol/logLevel': 'error' }],
  ])('%s: not plain, the SDK classifies it (and the answer is the SDK’s)', (_label, meta) => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }
    expect(plainEra(body, new Headers(modern))).toBeUndefined()
  })

  it(
    'the SDK classifier is skipped for a plain request and asked for the rest; ' +
      'exact says whether the fast path may serve',
    () => {
      const registry = new ConnectorMCPRegistry()
      registry.commit(
        buildRoute('k', 1, { callTool: async () => ({ content: [] }) }, [
          { name: 't', inputSchema: { type: 'object' } },
        ]),
      )
      const plain = classifyMcpRequest(
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } },
        new Headers(modern),
        registry,
        SessionView.WHOLE,
      )
      expect([plain.era, plain.exact, plain.outcome]).toEqual(['modern', true, undefined])
      // a rich envelope: classified by the SDK, still exactly right for the fast path
      const rich = classifyMcpRequest(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: { _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { sampling: { tools: {} } } } },
        },
        new Headers(modern),
        registry,
        SessionView.WHOLE,
      )
      expect([rich.era, rich.exact, rich.outcome?.kind]).toEqual(['modern', true, 'modern'])
      const other = classifyMcpRequest(
        { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: META } },
        new Headers({ ...modern, 'mcp-method': 'ping' }),
        registry,
        SessionView.WHOLE,
      )
      expect([other.era, other.exact, other.outcome?.kind]).toEqual(['modern', false, 'modern'])
      const call = classifyMcpRequest(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'k_t' } },
        new Headers({ ...base, 'mcp-protocol-version': '2025-06-18' }),
        registry,
        SessionView.WHOLE,
      )
      expect([call.era, call.exact, call.binding?.tool.localName]).toEqual(['legacy', true, 'k_t'])
    },
  )
})
