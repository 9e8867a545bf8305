/**
 * The MCP wire's own names, spelled once for the server (mcpserver/), the
 * upstream clients (upstream/, oauth/) and the bridge (bridge/): protocol
 * revisions, `_meta` keys, HTTP header names and the `Mcp-Param-*` value
 * encoding (SEP-2243). No SDK import, so the pure core may use it too; a
 * unit test holds each name equal to the SDK's where the SDK exports one.
 */

/** MCP revisions: the stateless one, and the 2025 one every `initialize` is answered with. */
export const MODERN_REVISION = '2026-07-28'
export const LEGACY_REVISION = '2025-06-18'
/** Other 2025 revisions a client may keep sending after the handshake; served as 2025-06-18. */
export const TOLERATED_LEGACY_REVISIONS = ['2025-11-25', '2025-03-26'] as const

/** `_meta` keys of 2026-07-28 requests and notifications. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  relatedTask: 'io.modelcontextprotocol/related-task',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const

/** `_meta` keys a tool carries in tools/list that clients read (not MCP's own). */
export const TOOL_META = {
  /** Claude Code loads a tool marked `true` in full at start instead of deferring it to its tool search. */
  alwaysLoad: 'anthropic/alwaysLoad',
} as const

/** HTTP header names, lower-cased as Node and the Fetch API give them. */
export const HEADER = {
  protocolVersion: 'mcp-protocol-version',
  method: 'mcp-method',
  name: 'mcp-name',
  sessionId: 'mcp-session-id',
} as const
/** `Mcp-Param-<Name>`: a tool argument its schema marks `x-mcp-header`, mirrored into a header. */
export const PARAM_HEADER_PREFIX = 'mcp-param-'

/** Methods whose `Mcp-Name` header mirrors a body field (SEP-2243, the SDK's MCP_NAME_HEADER_SOURCE). */
export const NAME_HEADER_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
}

const SENTINEL_PREFIX = '=?base64?'
const SENTINEL_SUFFIX = '?='
const SENTINEL = /^=\?base64\?(.*)\?=$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** A value as an HTTP field value: plain printable ASCII as it is, anything else as `=?base64?…?=` (as the SDK). */
export function encodeHeaderValue(value: string): string {
  let plain =
    value.length > 0 &&
    value === value.trim() &&
    !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i)
    plain = c === 9 || (c >= 32 && c <= 126)
  }
  return plain ? value : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`
}

/** A header value as sent: the `=?base64?…?=` form decoded; undefined when that form is not valid base64 UTF-8. */
export function decodeHeaderValue(raw: string): string | undefined {
  const m = SENTINEL.exec(raw)
  if (!m) return raw
  if (!BASE64.test(m[1]!)) return undefined
  try {
    return utf8.decode(Buffer.from(m[1]!, 'base64'))
  } catch {
    // a fatal decoder throws on bytes that are not UTF-8: an invalid encoding, said by undefined
    return undefined
  }
}

/** The subscriptions/listen request tutti's own watches of tool changes send (the bridge's, exec's). */
export function toolsListenRequest(id: string, client: { name: string; version: string }): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: {
      notifications: { toolsListChanged: true },
      _meta: { [META.protocolVersion]: MODERN_REVISION, [META.clientCapabilities]: {}, [META.clientInfo]: client },
    },
  })
}
