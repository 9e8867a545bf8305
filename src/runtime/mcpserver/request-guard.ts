import { jsonRpcError, JSONRPC } from '../http-surface/error-response.js'
import type { HeaderLookup } from '../http-surface/header-lookup.js'
import { HTTP_LIMITS } from '../http-surface/http-limits.js'
import type { BodyRead } from '../http-surface/read-body.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import type { McpRequest } from './classify.js'
import { checkParamHeaders } from './param-headers.js'

/**
 * The connector endpoint's own guard, as functions both serving paths call
 * (the node front and the h3 path): the session token, the body, and
 * `Mcp-Param-*`. A refusal is always built here, by the h3 path.
 */
export const MAX_MCP_BODY = HTTP_LIMITS.mcpBodyBytes

/**
 * The session (its token's hash) of an `Authorization: Bearer` token that verifies, else undefined; a verified one is
 * counted as seen.
 */
export function bearerSession(sessions: SessionTokens, headers: HeaderLookup): string | undefined {
  const auth = headers.get('authorization')
  const hash = sessions.verify(auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined)?.hash
  if (hash) sessions.activity.seen(hash)
  return hash
}

export function unauthorized(headers: HeaderLookup): Response {
  const message = headers.get('authorization')
    ? 'invalid or revoked session token'
    : 'missing session token (Authorization: Bearer …)'
  return jsonRpcError(401, JSONRPC.UNAUTHORIZED, message, null, undefined, {
    'www-authenticate': 'Bearer realm="tutti"',
  })
}

export function methodNotAllowed(): Response {
  return jsonRpcError(
    405,
    JSONRPC.SERVER_ERROR,
    'Method not allowed: the connector MCP server accepts POST only',
    null,
    undefined,
    { allow: 'POST' },
  )
}

/** The body a client declared is over the limit: refused before a byte of it is read. */
export function declaredTooLarge(headers: HeaderLookup): boolean {
  return Number(headers.get('content-length') ?? '0') > MAX_MCP_BODY
}

/** The parsed JSON-RPC message object, or the error that answers the request. */
export function parseMessage(read: BodyRead): Record<string, unknown> | Response {
  if (!read.ok && read.reason === 'too-large')
    return jsonRpcError(413, JSONRPC.INVALID_REQUEST, `request body larger than ${MAX_MCP_BODY} bytes`)
  if (!read.ok) return jsonRpcError(400, JSONRPC.PARSE_ERROR, 'Parse error: the request body did not arrive in full')
  let body: unknown
  try {
    body = JSON.parse(read.text)
  } catch {
    // answered as a JSON-RPC parse error: the client's body is at fault
    return jsonRpcError(400, JSONRPC.PARSE_ERROR, 'Parse error: the body is not valid JSON')
  }
  if (Array.isArray(body)) return jsonRpcError(400, JSONRPC.INVALID_REQUEST, 'JSON-RPC batches are not supported')
  if (!body || typeof body !== 'object')
    return jsonRpcError(400, JSONRPC.INVALID_REQUEST, 'the body must be a JSON-RPC message object')
  return body as Record<string, unknown>
}

/**
 * `Mcp-Param-*` headers of a 2026-07-28 tools/call, checked against the
 * arguments before anything is dispatched. The SDK checks them only for its
 * high-level McpServer (see param-headers.ts).
 */
export function paramHeaderMismatch(
  request: McpRequest,
  body: Record<string, unknown>,
  headers: HeaderLookup,
): Response | undefined {
  const declared = request.era === 'modern' ? request.binding?.tool.headerParams : undefined
  if (!declared?.length) return undefined
  const mismatch = checkParamHeaders(declared, (body.params as { arguments?: unknown }).arguments, headers)
  if (!mismatch) return undefined
  const message = `Bad Request: the request headers and body disagree: ${mismatch.problem} for ${mismatch.header}`
  return jsonRpcError(400, JSONRPC.HEADER_MISMATCH, message, body.id, {
    mismatch: { header: mismatch.header, body: mismatch.body },
  })
}
