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
        const result = (await binding.client.callTool(binding.tool.upstreamName, req.params.arguments, { signal })) as CallToolResult
        assertSerializable(result)
        return result
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

/**
 * The SDK serializes a result only after the handler has returned, where a
 * failure leaves the exchange without an answer (a 2026-07-28 call hangs, a
 * 2025-06-18 one gets an empty 200). So a result JSON cannot carry (nested
 * past the stack, in practice) fails here, as the fast path's own
 * serialization does. The check runs a few levels deeper than the result
 * itself, so that the SDK, serializing from a slightly different stack
 * depth and inside its envelope, cannot overflow where this did not.
 */
const SERIALIZATION_MARGIN = 64

function assertSerializable(result: CallToolResult): void {
  let wrapped: unknown = result
  for (let i = 0; i < SERIALIZATION_MARGIN; i++) wrapped = [wrapped]
  JSON.stringify(wrapped)
}

/**
 * An upstream's JSON-RPC error passes through; anything else is an internal
 * error naming the connector. In a tools/call, a RangeError is the result
 * failing to serialize (nested past the stack, or longer than a string may
 * be), on either path.
 */
export function asProtocolError(err: unknown, connector: string): ProtocolError {
  if (err instanceof ProtocolError) return err
  if (err instanceof RangeError) return new ProtocolError(ProtocolErrorCode.InternalError, `connector "${connector}": the tool result could not be serialized (${err.message})`, { connector })
  const e = err as { code?: unknown; message?: string; data?: unknown }
  if (typeof e.code === 'number' && Number.isInteger(e.code) && e.code < 0) return new ProtocolError(e.code, e.message ?? 'upstream error', e.data)
  const message = isTuttiError(err) ? err.message : `connector "${connector}": ${e.message ?? String(err)}`
  return new ProtocolError(ProtocolErrorCode.InternalError, message, { connector })
}
