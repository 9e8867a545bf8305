import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server'
import type { HTTPResponse } from 'h3'
import { jsonRpcError, JSONRPC } from '../http/error-response.js'
import { HTTP_LIMITS } from '../http/http-limits.js'
import { readBodyLimited } from '../http/read-body.js'
import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'
import { LEGACY_REVISION } from '../names.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import { classifyMcpRequest, type McpRequest } from './classify.js'
import { exchangeAuth } from './exchange.js'
import { FastPath } from './fast-path.js'
import { LegacyCancellation } from './legacy-cancellation.js'
import { ListChangedNotifier } from './list-changed-notifier.js'
import { ListenStreams } from './listen-streams.js'
import { checkParamHeaders } from './param-headers.js'
import { createServerFactory } from './server-factory.js'
import { ToolService, type ToolOutcome } from './tool-service.js'

export const MCP_PATH = '/mcp/connector'
export const MAX_MCP_BODY = HTTP_LIMITS.mcpBodyBytes

type Params = { arguments?: unknown; protocolVersion?: unknown; requestId?: unknown }

/**
 * The local `connector` MCP server (DESIGN §9): our guard first (POST only,
 * session token, body size, no batches, `Mcp-Param-*`), then one
 * classification of the request, then the fast path or the SDK's handler,
 * both serving from one tool service. The loopback Host/Origin guard has
 * already run in the daemon app.
 */
export class ConnectorMcpEndpoint {
  private readonly handler: McpHttpHandler
  private readonly cancellation = new LegacyCancellation()
  private readonly streams: ListenStreams
  private readonly fastPath: FastPath
  readonly notifier: ListChangedNotifier

  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly sessions: SessionTokens,
    private readonly log: Logger,
  ) {
    const tools = new ToolService(registry, this.cancellation)
    this.handler = createMcpHandler(createServerFactory(tools), {
      maxRequestBodySize: MAX_MCP_BODY,
      keepAliveMs: HTTP_LIMITS.sseKeepAliveMs,
      // a client's bad request is the client's problem: kept out of the default log level
      onerror: (err) => log.debug('mcp request failed', { error: err }),
    })
    this.fastPath = new FastPath(tools)
    this.streams = new ListenStreams(log)
    this.notifier = new ListChangedNotifier(() => this.handler.notify.toolsChanged())
    registry.onChange(() => this.notifier.changed())
    sessions.onRevoked((revoked) => {
      const closed = this.streams.closeSessions(revoked.map((r) => r.hash))
      if (closed) log.info('listen streams of revoked sessions closed', { streams: closed })
    })
  }

  get openStreams(): number {
    return this.streams.size
  }

  async handle(req: Request): Promise<Response | HTTPResponse> {
    if (req.method !== 'POST') return jsonRpcError(405, JSONRPC.SERVER_ERROR, 'Method not allowed: the connector MCP server accepts POST only', null, undefined, { allow: 'POST' })
    const auth = req.headers.get('authorization')
    const session = this.sessions.verify(auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined)
    if (!session) {
      return jsonRpcError(401, JSONRPC.UNAUTHORIZED, auth ? 'invalid or revoked session token' : 'missing session token (Authorization: Bearer …)', null, undefined, { 'www-authenticate': 'Bearer realm="tutti"' })
    }
    // POST and the session token are checked first: a refused request's body is never read
    const body = await readMessage(req)
    if (body instanceof Response) return body
    const request = classifyMcpRequest(body, req.headers, this.registry)
    const mismatch = paramHeaderMismatch(request, body, req.headers)
    if (mismatch) return mismatch
    if (request.era === 'legacy') this.legacyPreamble(request, body, session.hash)

    const sdk = (settled?: ToolOutcome): Promise<Response> =>
      this.handler.fetch(req, { parsedBody: body, authInfo: exchangeAuth({ request, session: session.hash, ...(settled ? { settled } : {}) }) })
    const fast = this.fastPath.tryHandle(request, body, req, session.hash, sdk)
    if (fast) return fast
    const response = await sdk()
    if (request.method === 'subscriptions/listen' && response.headers.get('content-type')?.includes('text/event-stream')) {
      return this.streams.track(session.hash, response)
    }
    return response
  }

  /** What the 2025 era needs before the SDK sees the request. */
  private legacyPreamble(request: McpRequest, body: Record<string, unknown>, session: string): void {
    const params = body.params as Params | undefined
    if (request.method === 'initialize' && typeof params?.protocolVersion === 'string') {
      // whatever 2025 revision is asked for, the answer is 2025-06-18 (the SDK would echo a listed one)
      params.protocolVersion = LEGACY_REVISION
    }
    // the SDK serves this on a fresh server that never sees the call; the table does
    if (request.method === 'notifications/cancelled' && params?.requestId !== undefined) {
      this.cancellation.cancel(session, params.requestId, 'cancelled by the client')
    }
  }

  /** Graceful: open listen streams get their final result, then close. */
  async close(): Promise<void> {
    this.notifier.dispose()
    await bestEffort(this.handler.close(), this.log, 'closing the MCP handler')
  }
}

/** The parsed JSON-RPC message object, or the error that answers the request. */
async function readMessage(req: Request): Promise<Record<string, unknown> | Response> {
  const read = await readBodyLimited(req, MAX_MCP_BODY)
  if (!read.ok && read.reason === 'too-large') return jsonRpcError(413, JSONRPC.INVALID_REQUEST, `request body larger than ${MAX_MCP_BODY} bytes`)
  if (!read.ok) return jsonRpcError(400, JSONRPC.PARSE_ERROR, 'Parse error: the request body did not arrive in full')
  let body: unknown
  try {
    body = JSON.parse(read.text)
  } catch {
    return jsonRpcError(400, JSONRPC.PARSE_ERROR, 'Parse error: the body is not valid JSON')
  }
  if (Array.isArray(body)) return jsonRpcError(400, JSONRPC.INVALID_REQUEST, 'JSON-RPC batches are not supported')
  if (!body || typeof body !== 'object') return jsonRpcError(400, JSONRPC.INVALID_REQUEST, 'the body must be a JSON-RPC message object')
  return body as Record<string, unknown>
}

/**
 * `Mcp-Param-*` headers of a 2026-07-28 tools/call, checked against the
 * arguments before anything is dispatched. The SDK checks them only for its
 * high-level McpServer (see param-headers.ts).
 */
function paramHeaderMismatch(request: McpRequest, body: Record<string, unknown>, headers: Headers): Response | undefined {
  const declared = request.era === 'modern' ? request.binding?.tool.headerParams : undefined
  if (!declared?.length) return undefined
  const mismatch = checkParamHeaders(declared, (body.params as Params).arguments, headers)
  if (!mismatch) return undefined
  const message = `Bad Request: the request headers and body disagree: ${mismatch.problem} for ${mismatch.header}`
  return jsonRpcError(400, JSONRPC.HEADER_MISMATCH, message, body.id, { mismatch: { header: mismatch.header, body: mismatch.body } })
}
