import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  type InboundClassificationOutcome,
} from '@modelcontextprotocol/server'
import type { HeaderLookup } from '../http-surface/header-lookup.js'
import { HEADER, LEGACY_REVISION, MODERN_REVISION } from '../mcp-wire.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { MCPToolBinding } from '../registry/route.js'
import type { SessionView } from '../sessions/session-view.js'

export type Era = 'modern' | 'legacy'

/**
 * One MCP request, classified once when it arrives. The guard, the fast path
 * and the SDK handlers all read this; nothing decides the era or resolves
 * the tool a second time, and both serving paths (node's own request, the
 * h3 app) call this one function.
 */
export interface McpRequest {
  /** undefined: the SDK's validation ladder refuses the request, and the SDK answers it. */
  readonly era: Era | undefined
  readonly method: string | undefined
  /** The registry's tool, for a tools/call naming one the session sees; it stays bound for the whole call. */
  readonly binding: MCPToolBinding | undefined
  /** What the session sees (its token's view), and under which names. */
  readonly view: SessionView
  /** tools/call or tools/list exactly as a plain client of its era sends it: the fast path may serve it. */
  readonly exact: boolean
  /** What the SDK's classifier said, when it was asked (a plain request's era is known without it). */
  readonly outcome?: InboundClassificationOutcome
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) return false
  return true
}

const isEmptyObject = (v: unknown): boolean => isPlainObject(v) && Object.keys(v).length === 0

/** The envelope the SDK would take as it is: no optional keys, capabilities each an object, a complete clientInfo. */
function plainEnvelope(meta: unknown): boolean {
  if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return false
  const caps = meta[CLIENT_CAPABILITIES_META_KEY]
  if (!isPlainObject(caps) || !Object.values(caps).every(isPlainObject)) return false
  const info = meta[CLIENT_INFO_META_KEY]
  if (info !== undefined && !(isPlainObject(info) && typeof info.name === 'string' && typeof info.version === 'string'))
    return false
  return onlyKeys(meta, [PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY])
}

/**
 * Body and headers exactly as a plain client of that era sends them: the
 * fast path's condition. Anything else (a header that needs decoding, extra
 * `_meta`, a cursor, an unusual Accept) is the SDK's to serve.
 */
function exactlyRight(
  era: Era,
  method: string | undefined,
  body: Record<string, unknown>,
  headers: HeaderLookup,
): boolean {
  if (method !== 'tools/call' && method !== 'tools/list') return false
  if (body.jsonrpc !== '2.0' || !onlyKeys(body, ['jsonrpc', 'id', 'method', 'params'])) return false
  if (typeof body.id !== 'string' && !(typeof body.id === 'number' && Number.isInteger(body.id))) return false
  const params = body.params ?? {}
  if (!isPlainObject(params)) return false
  if (method === 'tools/call') {
    if (typeof params.name !== 'string' || !onlyKeys(params, ['name', 'arguments', '_meta'])) return false
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) return false
  } else if (!onlyKeys(params, ['_meta'])) return false
  if (!isJsonContentType(headers.get('content-type'))) return false
  const accept = headers.get('accept') ?? ''
  if (!accept.includes('application/json')) return false
  if (era === 'legacy')
    return (
      params._meta === undefined &&
      headers.get(HEADER.protocolVersion) === LEGACY_REVISION &&
      accept.includes('text/event-stream')
    )
  if (!plainEnvelope(params._meta)) return false
  if (headers.get(HEADER.protocolVersion) !== MODERN_REVISION || headers.get(HEADER.method) !== method) return false
  return method !== 'tools/call' || headers.get(HEADER.name) === params.name
}

/**
 * The era of a request so plain that the SDK's classifier (~11-16 µs a
 * request: several zod parses, two of them failing) could only say the
 * same: exactly right for that era, and for 2026-07-28 an envelope the
 * SDK's schema cannot refuse (every capability `{}`, a clientInfo of name
 * and version only). test/runtime/classify.test.ts holds it to the SDK.
 */
export function plainEra(body: Record<string, unknown>, headers: HeaderLookup): Era | undefined {
  const method = typeof body.method === 'string' ? body.method : undefined
  const version = headers.get(HEADER.protocolVersion)
  const era: Era | undefined =
    version === LEGACY_REVISION ? 'legacy' : version === MODERN_REVISION ? 'modern' : undefined
  if (!era || !exactlyRight(era, method, body, headers)) return undefined
  if (era === 'legacy') return era
  const meta = (body.params as { _meta: Record<string, unknown> })._meta
  const info = meta[CLIENT_INFO_META_KEY] as Record<string, unknown> | undefined
  if (info !== undefined && !onlyKeys(info, ['name', 'version'])) return undefined
  return Object.values(meta[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown>).every(isEmptyObject)
    ? era
    : undefined
}

/**
 * A tool the session's view hides is no binding: unknown to that session on every path.
 * The era is the SDK's own decision: `classifyInboundRequest` is the step
 * `createMcpHandler` runs on the same headers and the same parsed body, so
 * this classification and the SDK's routing cannot disagree; a plain
 * request's era is the one it would decide. `body` is a parsed JSON object
 * (the guard has refused anything else).
 */
export function classifyMcpRequest(
  body: Record<string, unknown>,
  headers: HeaderLookup,
  registry: ConnectorMCPRegistry,
  view: SessionView,
  /** An MCP App's call by its own server's name (app-calls.ts), when the name is none the session sees. */
  appTool?: (name: string) => MCPToolBinding | undefined,
): McpRequest {
  const method = typeof body.method === 'string' ? body.method : undefined
  const plain = plainEra(body, headers)
  let era = plain
  let outcome: InboundClassificationOutcome | undefined
  if (!era) {
    outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: headers.get(HEADER.protocolVersion) ?? undefined,
      mcpMethodHeader: headers.get(HEADER.method) ?? undefined,
      mcpNameHeader: headers.get(HEADER.name) ?? undefined,
      body,
    })
    era = outcome.kind === 'reject' ? undefined : outcome.kind
  }
  const params = body.params as { name?: unknown } | undefined
  const name = method === 'tools/call' && params && typeof params === 'object' ? params.name : undefined
  const binding = era && typeof name === 'string' ? bindingOf(name, registry, view, appTool) : undefined
  // a tool that runs as a task is the tasks extension's to call (tasks-extension.ts), never the fast path's
  const exact =
    !binding?.tool.taskSupport &&
    (plain !== undefined || (era !== undefined && exactlyRight(era, method, body, headers)))
  return { era, method, binding, exact, view, ...(outcome ? { outcome } : {}) }
}

/** A tool the view sees by that name: published (`<key>_…`), or its upstream's own for an unprefixed session. */
function bindingOf(
  name: string,
  registry: ConnectorMCPRegistry,
  view: SessionView,
  appTool: ((name: string) => MCPToolBinding | undefined) | undefined,
): MCPToolBinding | undefined {
  const resolved =
    view.unprefixed === undefined ? registry.resolve(name) : registry.resolveUpstream(view.unprefixed, name)
  if (resolved && (view.whole || view.tool(resolved.tool))) return resolved
  return appTool?.(name)
}
