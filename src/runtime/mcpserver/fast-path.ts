import { HTTPResponse } from 'h3'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { ConnectorMCPTool, MCPToolBinding } from '../registry/route.js'
import { PRODUCT_VERSION } from '../version.js'
import type { LegacyCancellation } from './legacy-cancellation.js'
import { asProtocolError, SERVER_NAME } from './server-factory.js'

/**
 * The hot paths, `tools/call` and `tools/list`, without building an SDK
 * server per request. `createMcpHandler` costs ~1.3 ms a request on its own
 * (a fresh Server, zod parsing, a per-request transport; see bench/), more
 * than the whole budget for forwarding a call, and re-validates thousands
 * of tools on every list. This path takes only requests that are already
 * exactly right: any doubt (a header that needs decoding, extra `_meta`, a
 * cursor, an unknown tool, an unusual Accept) returns undefined and the SDK
 * handles the request, with its precise errors. Tests hold both paths to
 * the same bytes.
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

interface ListBody {
  jsonrpc: '2.0'
  id: string | number
  method: 'tools/list'
  params: { _meta?: Record<string, unknown> }
}

type Era = 'modern' | 'legacy'

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) return false
  return true
}

function wellFormedEnvelope(body: Record<string, unknown>, method: string): boolean {
  if (body.jsonrpc !== '2.0' || body.method !== method) return false
  if (typeof body.id !== 'string' && !(typeof body.id === 'number' && Number.isInteger(body.id))) return false
  return onlyKeys(body, ['jsonrpc', 'id', 'method', 'params'])
}

function wellFormedCall(body: Record<string, unknown>): body is CallBody & Record<string, unknown> {
  if (!wellFormedEnvelope(body, 'tools/call')) return false
  const p = body.params
  if (!isPlainObject(p) || typeof p.name !== 'string' || !onlyKeys(p, ['name', 'arguments', '_meta'])) return false
  return p.arguments === undefined || isPlainObject(p.arguments)
}

function wellFormedList(body: Record<string, unknown>): body is ListBody & Record<string, unknown> {
  if (!wellFormedEnvelope(body, 'tools/list')) return false
  if (body.params === undefined) {
    body.params = {}
    return true
  }
  return isPlainObject(body.params) && onlyKeys(body.params, ['_meta'])
}

/** Capabilities shaped as the schema wants (each one an object); anything else is for the SDK to judge. */
function plainCapabilities(v: unknown): boolean {
  return isPlainObject(v) && Object.values(v).every(isPlainObject)
}

function plainClientInfo(v: unknown): boolean {
  return isPlainObject(v) && typeof v.name === 'string' && typeof v.version === 'string'
}

/** Which era this request is, if it is a plain, valid request the fast path may serve. */
function era(body: CallBody | ListBody, headers: Headers): Era | undefined {
  if (!headers.get('content-type')?.startsWith('application/json')) return undefined
  const accept = headers.get('accept') ?? ''
  const meta = body.params._meta
  if (meta === undefined) {
    const ok = headers.get('mcp-protocol-version') === LEGACY && accept.includes('application/json') && accept.includes('text/event-stream')
    return ok ? 'legacy' : undefined
  }
  if (!isPlainObject(meta) || meta[ENVELOPE.version] !== MODERN || !plainCapabilities(meta[ENVELOPE.capabilities])) return undefined
  for (const k of Object.keys(meta)) if (k !== ENVELOPE.version && k !== ENVELOPE.capabilities && !(k === ENVELOPE.info && plainClientInfo(meta[k]))) return undefined
  const nameMatches = body.method === 'tools/list' || headers.get('mcp-name') === body.params.name
  const headersMatch = headers.get('mcp-protocol-version') === MODERN && headers.get('mcp-method') === body.method && nameMatches
  return headersMatch && accept.includes('application/json') ? 'modern' : undefined
}

/*
 * h3's HTTPResponse with a string body and a known length is written with one
 * writeHead + write, without a web stream or chunked encoding: on the hot path
 * that saves a syscall and the stream machinery per request.
 */
function modernResponse(payload: string, status = 200): HTTPResponse {
  return new HTTPResponse(payload, { status, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } })
}

function legacyResponse(payload: string): HTTPResponse {
  const body = `event: message\ndata: ${payload}\n\n`
  return new HTTPResponse(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', 'content-length': String(Buffer.byteLength(body)) },
  })
}

const SERVER_INFO_JSON = JSON.stringify({ 'io.modelcontextprotocol/serverInfo': SERVER_INFO })

/*
 * What the SDK does to an error on the 2026-07-28 wire, so both paths agree:
 * a missing client capability (-32021) is HTTP 400, and codes that revision
 * retired (-32002 resource not found, -32042 URL elicitation) become -32603.
 */
const MISSING_CAPABILITY = -32021
const RESOURCE_NOT_FOUND_2025 = -32002
const URL_ELICITATION_2025 = -32042
// the SDK's own wording (2.4.0); tools-call-paths.test.ts holds both paths to it
const URL_ELICITATION_MESSAGE =
  'URL elicitation cannot be signalled by throwing UrlElicitationRequiredError on protocol revision 2026-07-28: return inputRequired({ inputRequests: { …: inputRequired.elicitUrl(...) } }) from the handler instead. The urlElicitationRequired error (-32042) of earlier revisions is not available on this revision.'

function mapModernError(code: number, message: string, data: unknown): Record<string, unknown> | undefined {
  if (code === URL_ELICITATION_2025) return { code: -32603, message: URL_ELICITATION_MESSAGE }
  if (code === RESOURCE_NOT_FOUND_2025) return { code: -32603, message, ...(data !== undefined ? { data } : {}) }
  return undefined
}

export class FastPath {
  /** The serialized tool table of the registry snapshot it was made from. */
  private toolsJson?: { snapshot: readonly ConnectorMCPTool[]; json: string }

  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly cancellation: LegacyCancellation,
  ) {}

  /** A response (promise) when this path serves the request, else undefined. */
  tryHandle(body: Record<string, unknown>, req: Request, session: string): Promise<HTTPResponse> | HTTPResponse | undefined {
    if (body.method === 'tools/list') {
      if (!wellFormedList(body)) return undefined
      const which = era(body, req.headers)
      return which ? this.list(which, body) : undefined
    }
    if (!wellFormedCall(body)) return undefined
    const which = era(body, req.headers)
    if (!which) return undefined
    const binding = this.registry.resolve(body.params.name)
    if (!binding) return undefined
    return this.call(which, body, binding, req, session)
  }

  private list(which: Era, body: ListBody): HTTPResponse {
    const snapshot = this.registry.list()
    // each tool was serialized once, when its route was built
    if (this.toolsJson?.snapshot !== snapshot) this.toolsJson = { snapshot, json: `[${snapshot.map((t) => t.json).join(',')}]` }
    const id = JSON.stringify(body.id)
    if (which === 'legacy') return legacyResponse(`{"result":{"tools":${this.toolsJson.json}},"jsonrpc":"2.0","id":${id}}`)
    return modernResponse(`{"result":{"tools":${this.toolsJson.json},"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":${SERVER_INFO_JSON}},"jsonrpc":"2.0","id":${id}}`)
  }

  private async call(which: Era, body: CallBody, binding: MCPToolBinding, req: Request, session: string): Promise<HTTPResponse> {
    const legacy = which === 'legacy' ? this.cancellation.register(session, body.id) : undefined
    let payload: string
    let status = 200
    try {
      this.registry.assertDispatchable(binding)
      // req.signal aborts when the client goes away: the upstream call is cancelled too
      const signal = legacy ? AbortSignal.any([req.signal, legacy.signal]) : req.signal
      const result = await binding.client.callTool(binding.tool.upstreamName, body.params.arguments, { signal })
      const out = which === 'modern' ? { ...result, resultType: 'complete', _meta: { ...(isPlainObject(result._meta) ? result._meta : {}), 'io.modelcontextprotocol/serverInfo': SERVER_INFO } } : result
      payload = JSON.stringify({ result: out, jsonrpc: '2.0', id: body.id })
    } catch (err) {
      const e = asProtocolError(err, binding.connectorKey)
      const modernMapped = which === 'modern' ? mapModernError(e.code, e.message, e.data) : undefined
      const error: Record<string, unknown> = modernMapped ?? { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) }
      payload = JSON.stringify({ jsonrpc: '2.0', id: body.id, error })
      if (which === 'modern' && error.code === MISSING_CAPABILITY) status = 400
    } finally {
      legacy?.done()
    }
    return which === 'modern' ? modernResponse(payload, status) : legacyResponse(payload)
  }
}
