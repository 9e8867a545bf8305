import { encodeHeaderValue, HEADER, META, NAME_HEADER_SOURCE, PARAM_HEADER_PREFIX } from '../mcp-wire.js'
import { headerParams } from '../registry/build-route.js'
import type { HeaderParam } from '../registry/route.js'
import type { ClientMessage } from './client-message.js'

/** The revision a message claims in its `_meta`: set only on 2026-07-28 (modern) traffic. */
export function claimedRevision(params: Record<string, unknown> | undefined): string | undefined {
  const meta = params?._meta as Record<string, unknown> | undefined
  const v = meta && typeof meta === 'object' ? meta[META.protocolVersion] : undefined
  return typeof v === 'string' ? v : undefined
}

function primitive(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value)))
    return String(value)
  return undefined
}

/**
 * The HTTP headers a message needs at the daemon, which a stdio client does
 * not send: on 2026-07-28 (a `_meta` claim) `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` of the tool's `x-mcp-header`
 * properties, as the SDK's HTTP client sends them; on 2025 the revision the
 * handshake settled. The `x-mcp-header` declarations are learnt from the
 * tools/list answers the bridge relays.
 */
export class McpHeaders {
  /** The revision a 2025 initialize settled; sent on later 2025 requests as an HTTP client does. */
  private legacyRevision?: string
  private readonly params = new Map<string, HeaderParam[]>()

  of(message: Extract<ClientMessage, { kind: 'request' | 'notification' | 'response' }>): Record<string, string> {
    const legacy = (): Record<string, string> =>
      this.legacyRevision ? { [HEADER.protocolVersion]: this.legacyRevision } : {}
    // an answer to a relayed request is 2025-era traffic (2026-07-28 relays requests as input_required rounds)
    if (message.kind === 'response') return legacy()
    const revision = claimedRevision(message.params)
    if (revision === undefined) return legacy()
    const headers: Record<string, string> = { [HEADER.protocolVersion]: revision, [HEADER.method]: message.method }
    const field = Object.hasOwn(NAME_HEADER_SOURCE, message.method) ? NAME_HEADER_SOURCE[message.method]! : undefined
    const name = field ? message.params?.[field] : undefined
    if (typeof name === 'string') headers[HEADER.name] = encodeHeaderValue(name)
    if (message.method === 'tools/call' && typeof name === 'string') {
      for (const p of this.params.get(name) ?? []) {
        let node: unknown = message.params?.arguments
        for (const key of p.path)
          node =
            node && typeof node === 'object' && !Array.isArray(node)
              ? (node as Record<string, unknown>)[key]
              : undefined
        const value = primitive(node)
        if (value !== undefined) headers[`${PARAM_HEADER_PREFIX}${p.header}`] = encodeHeaderValue(value)
      }
    }
    return headers
  }

  settleLegacy(revision: string): void {
    this.legacyRevision = revision
  }

  /** A tools/list result (or page) as relayed: only a list that mentions `x-mcp-header` is read. */
  learn(payload: string): void {
    if (!payload.includes('x-mcp-header')) return
    let tools: unknown
    try {
      tools = (JSON.parse(payload) as { result?: { tools?: unknown } }).result?.tools
    } catch {
      // not JSON: no declarations to learn; the payload is relayed as it is
      return
    }
    if (!Array.isArray(tools)) return
    for (const t of tools as Array<{ name?: unknown; inputSchema?: unknown }>) {
      if (typeof t?.name !== 'string' || !t.inputSchema || typeof t.inputSchema !== 'object') continue
      const params = headerParams(t.inputSchema as Record<string, unknown>)
      if (Array.isArray(params) && params.length) this.params.set(t.name, params)
      else this.params.delete(t.name)
    }
  }
}
