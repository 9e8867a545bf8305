/** A JSON-RPC id as MCP allows it. */
export type RequestId = string | number

/**
 * One line from the stdio client, parsed once: what the bridge needs to
 * route it (method, id, the era's `_meta` claim) beside the bytes it
 * forwards unchanged.
 */
export type ClientMessage =
  | { kind: 'request'; id: RequestId; method: string; params: Record<string, unknown> | undefined; bytes: Buffer }
  | { kind: 'notification'; method: string; params: Record<string, unknown> | undefined; bytes: Buffer }
  /** The client's answer to a request the connector server relayed to it (an upstream's elicitation): POSTed back. */
  | { kind: 'response'; bytes: Buffer }
  /** Not JSON, or not a JSON-RPC message: answered with this error (id null when the message had no usable one). */
  | { kind: 'invalid'; id: RequestId | null; code: number; message: string }

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const INTERNAL_ERROR = -32603

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
const isId = (v: unknown): v is RequestId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))

export function parseClientMessage(bytes: Buffer): ClientMessage {
  let body: unknown
  try {
    body = JSON.parse(bytes.toString('utf8'))
  } catch {
    // answered as a JSON-RPC parse error: the client's line is at fault
    return { kind: 'invalid', id: null, code: PARSE_ERROR, message: 'Parse error: the line is not valid JSON' }
  }
  if (Array.isArray(body))
    return {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: JSON-RPC batches are not supported',
    }
  if (!isObject(body))
    return {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a message must be a JSON-RPC object',
    }
  const id = isId(body.id) ? body.id : null
  const invalid = (why: string): ClientMessage => ({
    kind: 'invalid',
    id,
    code: INVALID_REQUEST,
    message: `Invalid Request: ${why}`,
  })
  if (body.jsonrpc !== '2.0') return invalid('"jsonrpc" must be "2.0"')
  if (body.method === undefined) {
    if ('result' in body || 'error' in body) return { kind: 'response', bytes }
    return invalid('a request or notification needs a "method"')
  }
  if (typeof body.method !== 'string' || body.method === '') return invalid('"method" must be a non-empty string')
  if (body.params !== undefined && !isObject(body.params)) return invalid('"params" must be an object')
  const params = body.params as Record<string, unknown> | undefined
  if (!('id' in body)) return { kind: 'notification', method: body.method, params, bytes }
  if (id === null) return invalid('"id" must be a string or a number')
  return { kind: 'request', id, method: body.method, params, bytes }
}

/** The JSON-RPC error answer for a request (or, id null, for a message that could not be read). */
export function errorLine(id: RequestId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })
}
