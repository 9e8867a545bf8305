import { Server, type McpRequestContext } from '@modelcontextprotocol/server'
import { LEGACY_REVISION, MODERN_REVISION, TOLERATED_LEGACY_REVISIONS } from '../mcp-wire.js'
import { SERVER_NAME } from '../names.js'
import { PRODUCT_VERSION } from '../version.js'
import { exchangeOf } from './exchange.js'
import { PLAIN_INSTRUCTIONS, type ServerInstructions } from './server-instructions.js'
import type { ServerRequestRelay } from './server-request-relay.js'
import type { SkillCatalogue } from './skill-catalogue.js'
import { serveSkills, SKILLS_CAPABILITY } from './skills-extension.js'
import { serveSurface, surfaceCapabilities, type SurfaceServices } from './surface-handlers.js'
import { serveTasks, tasksCapability, taskToolCall } from './tasks-extension.js'
import { answerOrThrow, type ToolService } from './tool-service.js'

/**
 * The per-request server behind `/mcp/connector`. `createMcpHandler` builds
 * one per HTTP request, so it stays cheap: every answer comes from the tool
 * service at that moment. The era and the tool's binding come from the
 * endpoint's one classification of the request (see exchange.ts).
 * `tools.listChanged` and `resources.listChanged` are true only in the
 * 2026-07-28 era, where `subscriptions/listen` carries the notifications.
 * The connector Skills are served through the skills extension
 * (skills-extension.ts). Everything listed is what the session's view
 * sees, and the instructions name the connectors it sees.
 */
export function createServerFactory(
  tools: ToolService,
  skills: SkillCatalogue,
  surface: SurfaceServices,
  relays: ServerRequestRelay,
  instructions: ServerInstructions = PLAIN_INSTRUCTIONS,
) {
  return (ctx: McpRequestContext): Server => {
    const exchange = exchangeOf(ctx.authInfo)
    const { era } = exchange.request
    const { view } = exchange
    const server = new Server(
      { name: SERVER_NAME, version: PRODUCT_VERSION },
      {
        // tools; prompts, resources (the connectors' and the Skills': the extension requires the capability) and
        // completions
        capabilities: {
          tools: { listChanged: era === 'modern' },
          ...surfaceCapabilities(era),
          extensions: { ...SKILLS_CAPABILITY.extensions, ...tasksCapability(era) },
          // per-request log messages of the upstreams (server-request-relay.ts)
          logging: {},
        },
        // every initialize is answered with 2025-06-18 (the endpoint rewrites the requested version);
        // the other 2025 revisions are listed so that a client that keeps sending its own revision in
        // MCP-Protocol-Version after the handshake is still served
        supportedProtocolVersions: [MODERN_REVISION, LEGACY_REVISION, ...TOLERATED_LEGACY_REVISIONS],
        instructions: instructions(view),
        // a 2026-07-28 retry's requestState, checked before the handler runs (input-rounds.ts)
        requestState: { verify: relays.rounds.verify },
      },
    )

    server.setRequestHandler('tools/list', async (req) => tools.list(req.params?.cursor, view) as never)

    server.setRequestHandler('tools/call', async (req, hctx) => {
      // a tool that runs as a task: a CreateTaskResult, -32021, or (2025-06-18) a binding that drives the task
      const task = surface.tasks && taskToolCall(surface.tasks, exchange, req.params, hctx.mcpReq)
      const { name, arguments: args } = req.params
      const answer = task?.answer
      if (answer)
        return (await relays.serve(era, exchange.session, server, hctx, `tools/call ${name}`, (relay, cancel) =>
          answer({ relay, cancel, signal: cancel.signal }),
        )) as never
      // the fast path made the call already and leaves the encoding to the SDK
      if (exchange.settled) return answerOrThrow(exchange.settled)
      const legacy = era === 'legacy' ? { legacy: { session: exchange.session, id: hctx.mcpReq.id } } : {}
      const own = view.unprefixed !== undefined ? { unprefixed: true } : {}
      const session = exchange.session
      const binding = task?.binding ?? exchange.request.binding
      // progress, log messages and the upstream's requests reach this caller (server-request-relay.ts)
      return (await relays.serve(era, session, server, hctx, `tools/call ${name}`, async (relay, cancel) =>
        answerOrThrow(await tools.call(binding, name, args, { cancel, relay, session, ...own, ...legacy })),
      )) as never
    })
    relays.serveLogging(server, era, exchange.session)

    serveSkills(server, skills, era, view)
    serveSurface(server, surface, era, view, exchange.session, (ctx, subject, run) =>
      relays.serve(era, exchange.session, server, ctx, subject, run),
    )
    if (surface.tasks) serveTasks(server, surface.tasks, era, exchange.session, view)
    return server
  }
}
