import { ProtocolError, ProtocolErrorCode, Server, type McpRequestContext } from '@modelcontextprotocol/server'
import { LEGACY_REVISION, MODERN_REVISION, SERVER_NAME, TOLERATED_LEGACY_REVISIONS } from '../names.js'
import { PRODUCT_VERSION } from '../version.js'
import { exchangeOf } from './exchange.js'
import { answerOrThrow, type ToolService } from './tool-service.js'

const INSTRUCTIONS =
  'Tools of every connector installed in tutti, named <connector>_<tool>. The list changes while you run ' +
  'as connectors are installed, connected or removed; `tutti connector available` describes each connector.'

/**
 * The per-request server behind `/mcp/connector`. `createMcpHandler` builds
 * one per HTTP request, so it stays cheap: every answer comes from the tool
 * service at that moment. The era and the tool's binding come from the
 * endpoint's one classification of the request (see exchange.ts).
 * `tools.listChanged` is true only in the 2026-07-28 era, where
 * `subscriptions/listen` carries the notifications.
 */
export function createServerFactory(tools: ToolService) {
  return (ctx: McpRequestContext): Server => {
    const exchange = exchangeOf(ctx.authInfo)
    const era = exchange.request.era
    const server = new Server(
      { name: SERVER_NAME, version: PRODUCT_VERSION },
      {
        // only tools are projected; resources and prompts answer with empty lists
        capabilities: { tools: { listChanged: era === 'modern' }, resources: {}, prompts: {} },
        // every initialize is answered with 2025-06-18 (the endpoint rewrites the requested version);
        // the other 2025 revisions are listed so that a client that keeps sending its own revision in
        // MCP-Protocol-Version after the handshake is still served
        supportedProtocolVersions: [MODERN_REVISION, LEGACY_REVISION, ...TOLERATED_LEGACY_REVISIONS],
        instructions: INSTRUCTIONS,
      },
    )

    server.setRequestHandler('tools/list', async (req) => tools.list(req.params?.cursor))

    server.setRequestHandler('tools/call', async (req, hctx) => {
      // the fast path made the call already and leaves the encoding to the SDK
      const outcome =
        exchange.settled ??
        (await tools.call(exchange.request.binding, req.params.name, req.params.arguments, {
          signal: hctx.mcpReq.signal,
          ...(era === 'legacy' ? { legacy: { session: exchange.session, id: hctx.mcpReq.id } } : {}),
        }))
      return answerOrThrow(outcome)
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
