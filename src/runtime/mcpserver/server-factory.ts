import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type McpRequestContext } from '@modelcontextprotocol/server'
import { isTuttiError } from '../errors.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { toMcpTool } from '../registry/mcp-tool.js'
import { PRODUCT_VERSION } from '../version.js'
import type { LegacyCancellation } from './legacy-cancellation.js'

export const SERVER_NAME = 'connector'

/** The 2025-era revision every `initialize` is answered with. */
export const ANSWERED_2025_VERSION = '2025-06-18'
export const TOLERATED_2025_VERSIONS = ['2025-11-25', '2025-03-26'] as const

const INSTRUCTIONS =
  'Tools of every connector installed in tutti, named <connector>_<tool>. The list changes while you run ' +
  'as connectors are installed, connected or removed; `tutti connector available` describes each connector.'

/**
 * The per-request server behind `/mcp/connector`. `createMcpHandler` builds
 * one per HTTP request, so it stays cheap: every answer is read from the
 * registry at that moment. `tools.listChanged` is true only in the
 * 2026-07-28 era, where `subscriptions/listen` carries the notifications.
 */
export function createServerFactory(registry: ConnectorMCPRegistry, cancellation: LegacyCancellation) {
  return (ctx: McpRequestContext): Server => {
    const server = new Server(
      { name: SERVER_NAME, version: PRODUCT_VERSION },
      {
        // only tools are projected; resources and prompts answer with empty lists
        capabilities: { tools: { listChanged: ctx.era === 'modern' }, resources: {}, prompts: {} },
        // every initialize is answered with 2025-06-18 (the endpoint rewrites the requested version);
        // the other 2025 revisions are listed so that a client that keeps sending its own revision in
        // MCP-Protocol-Version after the handshake is still served
        supportedProtocolVersions: ['2026-07-28', ANSWERED_2025_VERSION, ...TOLERATED_2025_VERSIONS],
        instructions: INSTRUCTIONS,
      },
    )
    const session = ctx.authInfo?.clientId ?? 'anonymous'

    server.setRequestHandler('tools/list', async (req) => {
      if (req.params?.cursor) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown cursor "${req.params.cursor}"`)
      return { tools: registry.list().map(toMcpTool) }
    })

    server.setRequestHandler('tools/call', async (req, hctx) => {
      const name = req.params.name
      const binding = registry.resolve(name)
      if (!binding) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool "${name}"`)
      const legacy = ctx.era === 'legacy' ? cancellation.register(session, hctx.mcpReq.id) : undefined
      try {
        registry.assertDispatchable(binding)
        const signal = legacy ? AbortSignal.any([hctx.mcpReq.signal, legacy.signal]) : hctx.mcpReq.signal
        // results (content, structuredContent, isError) pass through unchanged
        return (await binding.client.callTool(binding.tool.upstreamName, req.params.arguments, { signal })) as CallToolResult
      } catch (err) {
        throw asProtocolError(err, binding.connectorKey)
      } finally {
        legacy?.done()
      }
    })

    server.setRequestHandler('resources/list', async () => ({ resources: [] }))
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [] }))
    server.setRequestHandler('prompts/list', async () => ({ prompts: [] }))
    server.setRequestHandler('resources/read', async (req) => {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `resource not found: ${req.params.uri}`, { uri: req.params.uri })
    })
    return server
  }
}

/** An upstream's JSON-RPC error passes through; anything else is an internal error naming the connector. */
export function asProtocolError(err: unknown, connector: string): ProtocolError {
  if (err instanceof ProtocolError) return err
  const e = err as { code?: unknown; message?: string; data?: unknown }
  if (typeof e.code === 'number' && Number.isInteger(e.code) && e.code < 0) return new ProtocolError(e.code, e.message ?? 'upstream error', e.data)
  const message = isTuttiError(err) ? err.message : `connector "${connector}": ${e.message ?? String(err)}`
  return new ProtocolError(ProtocolErrorCode.InternalError, message, { connector })
}
