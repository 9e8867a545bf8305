import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server'
import type { HTTPResponse } from 'h3'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { HeaderLookup } from '../http-surface/header-lookup.js'
import { HTTP_LIMITS } from '../http-surface/http-limits.js'
import { readBodyLimited } from '../http-surface/read-body.js'
import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'
import { LEGACY_REVISION } from '../mcp-wire.js'
import { NO_FAST_PATH_ENV, switchedOff } from '../names.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import { classifyMcpRequest, type McpRequest } from './classify.js'
import { exchangeAuth } from './exchange.js'
import { FastPath } from './fast-path.js'
import { takeHandover, type Handover } from './handover.js'
import { LegacyCancellation } from './legacy-cancellation.js'
import { AppCalls } from './app-calls.js'
import { CompletionService } from './completion-service.js'
import { ListNotices } from './list-notices.js'
import { PromptService } from './prompt-service.js'
import { ResourceService } from './resource-service.js'
import { ResourceUpdates } from './resource-updates.js'
import { UpstreamSubscriptions } from './upstream-subscriptions.js'
import { ListenStreams } from './listen-streams.js'
import { daemonResultCap, ResultCaps } from './result-caps.js'
import { NodeFront } from './node-front.js'
import {
  bearerSession,
  MAX_MCP_BODY,
  methodNotAllowed,
  paramHeaderMismatch,
  parseMessage,
  unauthorized,
} from './request-guard.js'
import { type AfterSignIn, CallSignIn } from './call-sign-in.js'
import { createServerFactory } from './server-factory.js'
import type { ServerInstructions } from './server-instructions.js'
import { ServerRequestRelay } from './server-request-relay.js'
import { SessionRequests } from './session-requests.js'
import { SkillCatalogue } from './skill-catalogue.js'
import { TaskListen } from './task-listen.js'
import { TaskService } from './task-service.js'
import { ToolService, type ToolOutcome } from './tool-service.js'
import { inStreamScope, LIST_OF, ViewEventBus } from './view-event-bus.js'
import { upstreamUri } from '../registry/resource-uris.js'
import type { SessionView } from '../sessions/session-view.js'

/** The URIs a subscriptions/listen request asks to hear updates of. */
function resourceSubscriptions(message: Record<string, unknown>): string[] {
  const params = message.params as { notifications?: { resourceSubscriptions?: unknown } } | undefined
  const uris = params?.notifications?.resourceSubscriptions
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : []
}

export const MCP_PATH = '/mcp/connector'
export { MAX_MCP_BODY }

type Params = { protocolVersion?: unknown; requestId?: unknown; capabilities?: unknown }

export interface EndpointOptions {
  fastPath?: boolean
  instructions?: ServerInstructions
  maxResultBytes?: number
  /** Reconciles a connector once a caller signed in to it through tutti's URL elicitation (call-sign-in.ts). */
  afterSignIn?: AfterSignIn
}

/**
 * The local `connector` MCP server (DESIGN §9): our guard first (POST only,
 * session token, body size, no batches, `Mcp-Param-*`), then one
 * classification of the request, then the fast path or the SDK's handler,
 * both serving from one tool service. It is served on node's own request
 * (serveNode, the hot path) or through the h3 app (handle); the loopback
 * Host/Origin guard has already run on either (daemon/listener/app.ts).
 */
export class ConnectorMcpEndpoint {
  private readonly handler: McpHttpHandler
  private readonly cancellation = new LegacyCancellation()
  private readonly streams: ListenStreams
  private readonly requests = new SessionRequests(HTTP_LIMITS.mcpRequestsPerSession)
  private readonly fastPath: FastPath
  private readonly front: NodeFront
  /** false (TUTTI_NO_FAST_PATH=1): the node front takes nothing and the SDK's handler serves every request. */
  private readonly fast: boolean
  private readonly notices: ListNotices
  private readonly updates: ResourceUpdates
  private readonly subscriptions: UpstreamSubscriptions
  private readonly caps: ResultCaps
  /** Whose MCP App pages each session was served, for the apps' own calls. */
  private readonly apps: AppCalls
  /** Progress, logs and the upstreams' requests on their way to the caller (server-request-relay.ts). */
  private readonly relays = new ServerRequestRelay()
  private readonly taskListen: TaskListen

  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly sessions: SessionTokens,
    private readonly log: Logger,
    /** The connector Skills served over MCP; the daemon keeps it up to date (none by default). */
    skills: SkillCatalogue = new SkillCatalogue(log),
    options: EndpointOptions = {},
  ) {
    this.fast = options.fastPath ?? !switchedOff(NO_FAST_PATH_ENV)
    if (!this.fast) log.info(`${NO_FAST_PATH_ENV}=1: every MCP request is served by the SDK's handler`)
    this.apps = new AppCalls(registry)
    // the cap on a tool result (TUTTI_MAX_RESULT_BYTES), and the whole results of cut calls
    this.caps = new ResultCaps(options.maxResultBytes ?? daemonResultCap(process.env, log))
    const signIn = options.afterSignIn && new CallSignIn(options.afterSignIn, log.child('sign-in'))
    const tools = new ToolService(registry, this.cancellation, this.caps, signIn || undefined)
    const surface = {
      prompts: new PromptService(registry),
      resources: new ResourceService(registry, skills, { results: this.caps.store }, this.apps),
      completions: new CompletionService(registry),
      tasks: new TaskService(registry),
    }
    this.taskListen = new TaskListen(surface.tasks, log)
    // each listen stream is told of a change only when what its own session sees changed
    const prints = { tools, prompts: surface.prompts, resources: surface.resources }
    const sees = (uri: string, view: SessionView) => {
      const owner = upstreamUri(uri)
      return !owner || view.connector(owner.key)
    }
    const bus = new ViewEventBus((kind, view) => prints[LIST_OF[kind]].print(view), log, sees)
    this.handler = createMcpHandler(createServerFactory(tools, skills, surface, this.relays, options.instructions), {
      bus,
      maxRequestBodySize: MAX_MCP_BODY,
      keepAliveMs: HTTP_LIMITS.sseKeepAliveMs,
      // a client's bad request is the client's problem: kept out of the default log level
      onerror: (err) => log.debug('mcp request failed', { error: err }),
    })
    this.fastPath = new FastPath(tools, (era, body, session) => this.relays.needsStream(era, body, session))
    this.front = new NodeFront(sessions, registry, this.fastPath, this.requests, log, this.apps)
    this.streams = new ListenStreams(log)
    this.notices = new ListNotices(this.handler.notify, registry, skills)
    this.updates = new ResourceUpdates((uri) => this.handler.notify.resourceUpdated(uri), log)
    this.subscriptions = new UpstreamSubscriptions(surface.resources, log)
    sessions.onRevoked((revoked) => {
      const hashes = revoked.map((r) => r.hash)
      this.caps.store.forget(hashes)
      this.apps.forget(hashes)
      this.relays.legacy.forget(hashes)
      const closed = this.streams.closeSessions(hashes)
      if (closed) log.info('listen streams of revoked sessions closed', { streams: closed })
    })
  }

  get openStreams(): number {
    return this.streams.size
  }

  /** An upstream said a resource changed (`uri` as the connector server serves it). */
  resourceUpdated(uri: string): void {
    this.updates.updated(uri)
  }

  /** The whole results of cut tool calls held for their sessions (result-store.ts). */
  get storedResults(): { results: number; bytes: number } {
    return this.caps.store.held
  }

  /**
   * The hot path on node's own request (node-front.ts), for the daemon's
   * listener, which has applied the loopback guard to `headers`. false:
   * not taken, the h3 path serves it; `toH3` hands it over after all.
   */
  serveNode(req: IncomingMessage, res: ServerResponse, headers: HeaderLookup, toH3: () => void): boolean {
    return this.fast && this.front.serve(req, res, headers, toH3)
  }

  async handle(req: Request): Promise<Response | HTTPResponse> {
    // read, verified and perhaps called on node's request already, by the same functions as below
    const handover = takeHandover(req)
    if (handover) return this.answer(req, handover)
    if (req.method !== 'POST') return methodNotAllowed()
    const session = bearerSession(this.sessions, req.headers)
    if (!session) return unauthorized(req.headers)
    // POST, the session token and its requests in flight are checked first: a refused request's body is never read
    if (!this.requests.admitWeb(session, req)) return this.requests.refusal()
    return this.answer(req, { session, message: parseMessage(await readBodyLimited(req, MAX_MCP_BODY)) })
  }

  private async answer(
    req: Request,
    { session, message, request: classified, settled }: Handover,
  ): Promise<Response | HTTPResponse> {
    if (message instanceof Response) return message
    // a client's answer to a request relayed to it: never a request for the SDK to serve
    const answered = this.relays.answered(session, message)
    if (answered) return answered
    const view = this.sessions.viewOf(session)
    const appTool = (name: string) => this.apps.tool(session, view, name)
    const request = classified ?? classifyMcpRequest(message, req.headers, this.registry, view, appTool)
    const mismatch = paramHeaderMismatch(request, message, req.headers)
    if (mismatch) return mismatch
    if (request.era === 'legacy') this.legacyPreamble(request, message, session)

    const sdk = (outcome?: ToolOutcome): Promise<Response> =>
      this.handler.fetch(req, {
        parsedBody: message,
        authInfo: exchangeAuth({ request, session, view, ...(outcome ? { settled: outcome } : {}) }),
      })
    // the node front made the call; the SDK encodes its answer
    if (settled) return sdk(settled)
    const fast = this.fast ? this.fastPath.tryHandle(request, message, req, session, view, sdk) : undefined
    if (fast) return fast
    if (request.method !== 'subscriptions/listen') return sdk()
    // the stream subscribes to the bus while the SDK serves it: in the session's scope, so it gets its view's news
    return this.listen(session, message, view, () => inStreamScope(view, sdk))
  }

  /**
   * A listen stream, within its caps: a place is held for it while the SDK answers, kept if it opens a stream. The
   * resources it asks to hear of are subscribed to at their upstreams for as long as it is open.
   */
  private async listen(
    session: string,
    message: Record<string, unknown>,
    view: SessionView,
    sdk: () => Promise<Response>,
  ): Promise<Response> {
    const { id } = message
    // the tasks extension's `taskIds`, which the SDK's listen router does not know (task-listen.ts)
    const tasks = this.taskListen.take(message, session, view)
    if (tasks instanceof Response) return tasks
    const refused = this.streams.reserve(session, id)
    if (refused) return refused
    let response: Response
    try {
      response = await sdk()
    } catch (err) {
      this.streams.release(session)
      throw err
    }
    if (!response.headers.get('content-type')?.includes('text/event-stream')) {
      this.streams.release(session)
      return response
    }
    const release = this.subscriptions.hold(resourceSubscriptions(message), view)
    return this.streams.track(session, tasks ? tasks.wrap(response) : response, release)
  }

  /** What the 2025 era needs before the SDK sees the request. */
  private legacyPreamble(request: McpRequest, body: Record<string, unknown>, session: string): void {
    const params = body.params as Params | undefined
    if (request.method === 'initialize' && typeof params?.protocolVersion === 'string') {
      // whatever 2025 revision is asked for, the answer is 2025-06-18 (the SDK would echo a listed one)
      params.protocolVersion = LEGACY_REVISION
    }
    // what it can be sent while it waits for a call: each later request is served by a server that never saw this
    if (request.method === 'initialize') this.relays.legacy.initialized(session, params?.capabilities)
    // the SDK serves this on a fresh server that never sees the call; the table does
    if (request.method === 'notifications/cancelled' && params?.requestId !== undefined) {
      this.cancellation.cancel(session, params.requestId, 'cancelled by the client')
    }
  }

  /** Graceful: open listen streams get their final result, then close. */
  async close(): Promise<void> {
    this.notices.dispose()
    this.updates.dispose()
    this.caps.store.close()
    this.relays.dispose()
    await bestEffort(this.handler.close(), this.log, 'closing the MCP handler')
  }
}
