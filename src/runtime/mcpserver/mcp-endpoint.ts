import { createMcpHandler, PROTOCOL_VERSION_META_KEY, type McpHttpHandler } from '@modelcontextprotocol/server'
import type { HTTPResponse } from 'h3'
import type { Logger } from '../log/logger.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import { jsonRpcError, JSONRPC } from '../http/error-response.js'
import { HTTP_LIMITS } from '../http/http-limits.js'
import { readBodyLimited } from '../http/read-body.js'
import { LegacyCancellation } from './legacy-cancellation.js'
import { ListChangedNotifier } from './list-changed-notifier.js'
import { ListenStreams } from './listen-streams.js'
import { checkParamHeaders } from './param-headers.js'
import { ANSWERED_2025_VERSION, createServerFactory } from './server-factory.js'
import { FastPath } from './fast-path.js'

export const MCP_PATH = '/mcp/connector'
export const MAX_MCP_BODY = HTTP_LIMITS.mcpBodyBytes

type JsonRpcBody = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown; requestId?: unknown; _meta?: Record<string, unknown> } }

/**
 * The local `connector` MCP server (DESIGN §9): our guard first (POST only,
 * session token, body size, no batches, `Mcp-Param-*`), then the SDK's
 * handler serving both protocol eras from the registry. The loopback
 * Host/Origin guard has already run in the daemon app.
 */
export class ConnectorMcpEndpoint {
  private readonly handler: McpHttpHandler
  private readonly cancellation = new LegacyCancellation()
  private readonly streams = new ListenStreams()
  private readonly fastPath: FastPath
  readonly notifier: ListChangedNotifier

  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly sessions: SessionTokens,
    log: Logger,
  ) {
    this.handler = createMcpHandler(createServerFactory(registry, this.cancellation), {
      maxRequestBodySize: MAX_MCP_BODY,
      keepAliveMs: HTTP_LIMITS.sseKeepAliveMs,
      // a client's bad request is the client's problem: kept out of the default log level
      onerror: (err) => log.debug('mcp request failed', { error: err }),
    })
    this.fastPath = new FastPath(registry, this.cancellation)
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
    if (req.method !== 'POST') return jsonRpcError(405, -32000, 'Method not allowed: the connector MCP server accepts POST only', null, undefined, { allow: 'POST' })
    const auth = req.headers.get('authorization')
    const session = this.sessions.verify(auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined)
    if (!session) {
      return jsonRpcError(401, -32001, auth ? 'invalid or revoked session token' : 'missing session token (Authorization: Bearer …)', null, undefined, { 'www-authenticate': 'Bearer realm="tutti"' })
    }
    // POST and the session token are checked first: a refused request's body is never read
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
    const msg = body as JsonRpcBody
    const modern = !!msg.params?._meta && PROTOCOL_VERSION_META_KEY in msg.params._meta

    if (modern && msg.method === 'tools/call' && typeof msg.params?.name === 'string') {
      const binding = this.registry.resolve(msg.params.name)
      const mismatch = binding?.tool.headerParams.length ? checkParamHeaders(binding.tool.headerParams, msg.params.arguments, req.headers) : undefined
      if (mismatch) {
        return jsonRpcError(400, JSONRPC.HEADER_MISMATCH, `Bad Request: the request headers and body disagree: ${mismatch.problem} for ${mismatch.header}`, msg.id, { mismatch: { header: mismatch.header, body: mismatch.body } })
      }
    }
    if (!modern && msg.method === 'initialize' && msg.params && typeof (msg.params as { protocolVersion?: unknown }).protocolVersion === 'string') {
      // whatever 2025 revision is asked for, the answer is 2025-06-18 (the SDK would echo a listed one)
      ;(msg.params as { protocolVersion: string }).protocolVersion = ANSWERED_2025_VERSION
    }
    const sessionKey = `${session.workspace}/${session.session}`
    if (!modern && msg.method === 'notifications/cancelled' && msg.params?.requestId !== undefined) {
      this.cancellation.cancel(sessionKey, msg.params.requestId, 'cancelled by the client')
    }
    const fast = this.fastPath.tryHandle(body as Record<string, unknown>, req, sessionKey)
    if (fast) return fast
    const response = await this.handler.fetch(req, {
      parsedBody: body,
      authInfo: { token: session.hash, clientId: sessionKey, scopes: [] },
    })
    if (msg.method === 'subscriptions/listen' && response.headers.get('content-type')?.includes('text/event-stream')) {
      return this.streams.track(session.hash, response)
    }
    return response
  }

  /** Graceful: open listen streams get their final result, then close. */
  async close(): Promise<void> {
    this.notifier.dispose()
    await this.handler.close().catch(() => {})
  }
}
