import type { ErrorCode } from '../errors.js'

/**
 * Every answer the daemon's HTTP surface builds itself, in one place: the
 * control API's JSON, its errors, and the JSON-RPC errors of the MCP guard.
 * A control error's code is an ErrorCode, so the CLI rebuilds it with
 * fromWire as itself rather than as INTERNAL.
 */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

/** A control-API (or routing) error: `{ "error": { "code", "message" } }`. */
export function errorResponse(
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse(status, { error: { code, message } }, headers)
}

/** A JSON-RPC error as an HTTP response, echoing the request id when there is one. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  id: unknown = null,
  data?: unknown,
  headers: Record<string, string> = {},
): Response {
  const error: Record<string, unknown> = { code, message }
  if (data !== undefined) error.data = data
  return jsonResponse(status, { jsonrpc: '2.0', id: id ?? null, error }, headers)
}

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** The 2025 SDKs' generic server error; the guard's 405 uses it, as the SDK does. */
  SERVER_ERROR: -32000,
  /** Not a JSON-RPC code: the guard's 401, in the range the SDKs use for transport errors. */
  UNAUTHORIZED: -32001,
  HEADER_MISMATCH: -32020,
} as const
