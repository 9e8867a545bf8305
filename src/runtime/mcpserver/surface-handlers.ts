import type { Server, ServerContext } from '@modelcontextprotocol/server'
import type { CallCancel } from '../registry/call-cancel.js'
import type { CallRelay } from '../registry/call-relay.js'
import type { SessionView } from '../sessions/session-view.js'
import type { Era } from './classify.js'
import type { CompletionService } from './completion-service.js'
import type { PromptService } from './prompt-service.js'
import type { ResourceService } from './resource-service.js'
import type { TaskService } from './task-service.js'

/** The services behind everything the connector server serves besides tools and Skills' own methods. */
export interface SurfaceServices {
  prompts: PromptService
  resources: ResourceService
  completions: CompletionService
  /** The tasks extension's (tasks-extension.ts); none: no tool runs as a task. */
  tasks?: TaskService
}

/**
 * The capabilities the surface brings: prompts and resources (list_changed
 * is announced only on 2026-07-28 listen streams), resource subscriptions,
 * and completions.
 */
export function surfaceCapabilities(era: Era | undefined) {
  return {
    prompts: { listChanged: era === 'modern' },
    resources: { listChanged: era === 'modern', subscribe: true },
    completions: {},
  }
}

/** A request whose upstream may send progress, logs or requests of its own on the way (server-request-relay.ts). */
export type Relayed = (
  ctx: ServerContext,
  subject: string,
  run: (relay: CallRelay, cancel: CallCancel) => Promise<Record<string, unknown>>,
) => Promise<Record<string, unknown>>

/**
 * prompts/*, resources/* and completion/complete on the per-request
 * server: each answered from its service for the session's view, a call
 * ended by the client ending the upstream's too. resources/subscribe and
 * unsubscribe exist in the 2025 era only (2026-07-28 subscribes on a
 * subscriptions/listen stream).
 */
export function serveSurface(
  server: Server,
  services: SurfaceServices,
  era: Era | undefined,
  view: SessionView,
  session: string,
  relayed: Relayed,
): void {
  const { prompts, resources, completions } = services
  // the answers are the upstreams' (decoded by the SDK client) or built from them: the SDK's own result types hold
  server.setRequestHandler('prompts/list', async (req) => prompts.list(req.params?.cursor, view) as never)
  server.setRequestHandler('prompts/get', async (req, ctx) => {
    const { name, arguments: args } = req.params
    const run = (relay: CallRelay, cancel: CallCancel) =>
      prompts.get(name, args, view, { signal: cancel.signal, relay })
    return (await relayed(ctx, `prompts/get ${name}`, run)) as never
  })
  server.setRequestHandler('resources/list', async (req) => (await resources.list(req.params?.cursor, view)) as never)
  server.setRequestHandler('resources/templates/list', async () => resources.templates(view) as never)
  server.setRequestHandler('resources/read', async (req, ctx) => {
    const { uri } = req.params
    const run = (relay: CallRelay, cancel: CallCancel) =>
      resources.read(uri, view, { signal: cancel.signal, relay }, session)
    return (await relayed(ctx, `resources/read ${uri}`, run)) as never
  })
  server.setRequestHandler('completion/complete', async (req, ctx) => {
    const params = req.params as Record<string, unknown>
    return (await completions.complete(params, view, { signal: ctx.mcpReq.signal })) as never
  })
  if (era !== 'legacy') return
  server.setRequestHandler('resources/subscribe', async (req) => {
    await resources.subscription('resources/subscribe', req.params.uri, view)
    return {}
  })
  server.setRequestHandler('resources/unsubscribe', async (req) => {
    await resources.subscription('resources/unsubscribe', req.params.uri, view)
    return {}
  })
}
