import type { MCPToolBinding } from '../registry/route.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { PRODUCT_VERSION } from '../version.js'
import type { LegacyCancellation } from './legacy-cancellation.js'
import { asProtocolError, SERVER_NAME } from './server-factory.js'

/**
 * The hot path, `tools/call`, without building an SDK server per request.
 * `createMcpHandler` costs ~1.3 ms a request on its own (a fresh Server,
 * zod parsing, a per-request transport; measured in bench/), which alone is
 * more than the whole budget for forwarding a call. This path takes only
 * requests that are already exactly right: any doubt (a header that needs
 * decoding, extra `_meta`, an unknown tool, an unusual Accept) returns
 * undefined and the SDK handles the request, with its precise errors.
 */
const ENVELOPE = {
  version: 'io.modelcontextprotocol/protocolVersion',
  capabilities: 'io.modelcontextprotocol/clientCapabilities',
  info: 'io.modelcontextprotocol/clientInfo',
} as const
const MODERN = '2026-07-28'
const LEGACY = '2025-06-18'
const SERVER_INFO = { name: SERVER_NAME, version: PRODUCT_VERSION }

interface CallBody {
  jsonrpc: '2.0'
  id: string | number
  method: 'tools/call'
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

function wellFormedCall(body: Record<string, unknown>): body is CallBody & Record<string, unknown> {
  if (body.jsonrpc !== '2.0' || body.method !== 'tools/call') return false
  if (typeof body.id !== 'string' && !(typeof body.id === 'number' && Number.isInteger(body.id))) return false
  for (const k of Object.keys(body)) if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return false
  const p = body.params
  if (!isPlainObject(p) || typeof p.name !== 'string') return false
  for (const k of Object.keys(p)) if (k !== 'name' && k !== 'arguments' && k !== '_meta') return false
  return p.arguments === undefined || isPlainObject(p.arguments)
}

/** Which era this request is, if it is a plain, valid tools/call the fast path may serve. */
function era(body: CallBody, headers: Headers): 'modern' | 'legacy' | undefined {
  if (!headers.get('content-type')?.startsWith('application/json')) return undefined
  const accept = headers.get('accept') ?? ''
  const meta = body.params._meta
  if (meta === undefined) {
    const ok = headers.get('mcp-protocol-version') === LEGACY && accept.includes('application/json') && accept.includes('text/event-stream')
    return ok ? 'legacy' : undefined
  }
  if (!isPlainObject(meta) || meta[ENVELOPE.version] !== MODERN || !isPlainObject(meta[ENVELOPE.capabilities])) return undefined
  for (const k of Object.keys(meta)) if (k !== ENVELOPE.version && k !== ENVELOPE.capabilities && !(k === ENVELOPE.info && isPlainObject(meta[k]))) return undefined
  const headersMatch = headers.get('mcp-protocol-version') === MODERN && headers.get('mcp-method') === 'tools/call' && headers.get('mcp-name') === body.params.name
  return headersMatch && accept.includes('application/json') ? 'modern' : undefined
}

export class ToolsCallFastPath {
  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly cancellation: LegacyCancellation,
  ) {}

  /** A response promise when this path serves the request, else undefined. */
  tryHandle(body: Record<string, unknown>, req: Request, session: string): Promise<Response> | undefined {
    if (!wellFormedCall(body)) return undefined
    const which = era(body, req.headers)
    if (!which) return undefined
    const binding = this.registry.resolve(body.params.name)
    if (!binding) return undefined
    return this.call(which, body, binding, req, session)
  }

  private async call(which: 'modern' | 'legacy', body: CallBody, binding: MCPToolBinding, req: Request, session: string): Promise<Response> {
    const legacy = which === 'legacy' ? this.cancellation.register(session, body.id) : undefined
    let payload: string
    try {
      this.registry.assertDispatchable(binding)
      // req.signal aborts when the client goes away: the upstream call is cancelled too
      const signal = legacy ? AbortSignal.any([req.signal, legacy.signal]) : req.signal
      const result = await binding.client.callTool(binding.tool.upstreamName, body.params.arguments, { signal })
      const out = which === 'modern' ? { ...result, resultType: 'complete', _meta: { ...(isPlainObject(result._meta) ? result._meta : {}), 'io.modelcontextprotocol/serverInfo': SERVER_INFO } } : result
      payload = JSON.stringify({ result: out, jsonrpc: '2.0', id: body.id })
    } catch (err) {
      const e = asProtocolError(err, binding.connectorKey)
      const error: Record<string, unknown> = { code: e.code, message: e.message }
      if (e.data !== undefined) error.data = e.data
      payload = JSON.stringify({ jsonrpc: '2.0', id: body.id, error })
    } finally {
      legacy?.done()
    }
    if (which === 'modern') return new Response(payload, { status: 200, headers: { 'content-type': 'application/json' } })
    return new Response(`event: message\ndata: ${payload}\n\n`, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
    })
  }
}
