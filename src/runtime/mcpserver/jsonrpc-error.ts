/** A JSON-RPC error as an HTTP response, echoing the request id when there is one. */
export function jsonRpcError(status: number, code: number, message: string, id: unknown = null, data?: unknown, headers: Record<string, string> = {}): Response {
  const error: Record<string, unknown> = { code, message }
  if (data !== undefined) error.data = data
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error }), { status, headers: { 'content-type': 'application/json', ...headers } })
}

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  HEADER_MISMATCH: -32020,
} as const
