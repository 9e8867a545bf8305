import { isInputRequiredResult, type Client, type Transport } from '@modelcontextprotocol/client'
import { randomBytes } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import { MODERN_REVISION } from '../mcp-wire.js'
import { NO_DIRECT_CALLS_ENV, switchedOff } from '../names.js'
import { UpstreamInputRequired, type UpstreamRound } from '../registry/call-relay.js'
import type { RelayResult, RouteCallOptions, RouteClient, ToolCallResult, UpstreamTool } from '../registry/route.js'
import type { UpstreamTable } from '../registry/route.js'
import type { RelayMethod } from '../registry/surface.js'
import type { RouteTasks } from '../registry/tasks.js'
import { DIRECT_CALL_REVISIONS, DirectCalls } from './direct-calls.js'
import { ParamHeaderTools } from './param-header-tools.js'
import { ProcessGroupStdioTransport } from './stdio-transport.js'
import type { UpstreamSpec } from './upstream-spec.js'
import { describeExit, failure, timedOut } from './connection-failures.js'
import { listSurface } from './surface-listing.js'
import { CallRelays, withMeta } from './call-relays.js'
import { ExtensionTasks, relaysExtensionTasks, sdkTaskWire, type Tracked } from './extension-tasks.js'
import { envelope, RawRequests, wireTap } from './raw-requests.js'
import { upstreamClient, UpstreamNews } from './upstream-client.js'
import { connectUpstream, type StderrLines } from './upstream-connect.js'
import type { UpstreamEras } from './upstream-eras.js'
import { UPSTREAM_LIMITS } from './upstream-limits.js'
import { UpstreamListen } from './upstream-listen.js'
import { UpstreamTasks } from './upstream-tasks.js'

export { UPSTREAM_LIMITS } from './upstream-limits.js'
export type { StderrLines } from './upstream-connect.js'

/**
 * One live session with a connector's upstream MCP server, over stdio (own
 * process group) or Streamable HTTP, in the era it speaks. It is the route
 * client of the generations built on it: calls count in flight so a swap
 * can drain them before the connection closes.
 */
export class UpstreamConnection implements RouteClient {
  private inFlight = 0
  private drained?: () => void
  private closing?: Promise<void>
  private closedReason?: string
  private readonly closeListeners = new Set<(reason: string) => void>()
  /** tools/call without the SDK client's request machinery: stdio upstreams of the 2025 era. */
  private direct?: DirectCalls
  /** Remote upstreams: the listed tools that declare `x-mcp-header` params, for the SDK to send as `Mcp-Param-*`. */
  private readonly paramHeaderTools = new ParamHeaderTools()
  /** A 2026-07-28 link: it speaks in rounds, listens for changes, and sends what the SDK cannot decode raw. */
  private readonly modern: boolean
  private readonly raw?: RawRequests
  private readonly listen?: UpstreamListen
  /** Its tasks, counted in flight like calls; the (random) epoch tells its task ids from another connection's. */
  readonly tasks: RouteTasks

  private constructor(
    readonly spec: UpstreamSpec,
    private readonly client: Client,
    private readonly transport: Transport,
    /** Its requests in flight for sessions, and where what the upstream sends about them goes. */
    private readonly relays: CallRelays,
    private readonly news: UpstreamNews,
  ) {
    this.modern = client.getNegotiatedProtocolVersion() === MODERN_REVISION
    if (this.modern) {
      this.raw = new RawRequests(wireTap(transport))
      this.listen = new UpstreamListen(client, () => news.listsChanged())
    }
    client.onclose = () => {
      this.direct?.connectionClosed()
      this.raw?.connectionClosed()
      this.listen?.close()
      this.onTransportClosed()
    }
    const epoch = randomBytes(6).toString('base64url')
    const legacy = new UpstreamTasks(client, spec.key, epoch, this.callTimeoutMs)
    const tracked: Tracked = (options, request) => this.relays.track(options.relay, request)
    const raw = this.raw
    const wire = raw ? raw.request.bind(raw) : sdkTaskWire(client)
    const extension = new ExtensionTasks(wire, this.modern, spec.key, epoch, this.callTimeoutMs, tracked)
    // the wire its capabilities declare: SEP-2663's extension, else 2025-11-25's tasks
    const tasks = () => (relaysExtensionTasks(client) ? extension : legacy)
    this.tasks = {
      call: (name, args, options) => this.inFlightWhile(() => tasks().call(name, args, options)),
      request: (request, options) => this.inFlightWhile(() => tasks().request(request, options)),
    }
  }

  /**
   * `signal` abandons a connect that is no longer wanted (the connector was uninstalled or changed meanwhile);
   * `eras`: what earlier starts found out about a stdio server's era.
   */
  static async open(
    spec: UpstreamSpec,
    signal?: AbortSignal,
    onStderrLine?: StderrLines,
    eras?: UpstreamEras,
  ): Promise<UpstreamConnection> {
    const relays = new CallRelays(spec.key, spec.kind === 'http')
    const news = new UpstreamNews()
    const client = (options: Parameters<typeof upstreamClient>[2]) => upstreamClient(relays, news, options)
    const plan = { spec, client, ...(signal ? { signal } : {}), ...(onStderrLine ? { onStderrLine } : {}) }
    const connected = await connectUpstream({ ...plan, ...(eras ? { eras } : {}) })
    const conn = new UpstreamConnection(spec, connected.client, connected.transport, relays, news)
    // listening before the first list: a change after it is heard (one that cannot open is tried again)
    await conn.listen?.open().catch(() => undefined)
    // TUTTI_NO_DIRECT_CALLS=1: every call through the SDK client, as on an HTTP upstream
    const revision = connected.client.getNegotiatedProtocolVersion() ?? ''
    const direct = !switchedOff(NO_DIRECT_CALLS_ENV) && (conn.modern || DIRECT_CALL_REVISIONS.has(revision))
    if (connected.transport instanceof ProcessGroupStdioTransport && direct) {
      const modern = conn.modern ? envelope() : undefined
      conn.direct = new DirectCalls(connected.transport, connected.client, conn.callTimeoutMs, modern)
    }
    return conn
  }

  /** How long one tools/call may take: the manifest's mcp.timeouts.toolCallSeconds, else tutti's default. */
  private get callTimeoutMs(): number {
    return this.spec.timeouts?.toolCallMs ?? UPSTREAM_LIMITS.callTimeoutMs
  }

  get pid(): number | undefined {
    return this.transport instanceof ProcessGroupStdioTransport ? this.transport.pid : undefined
  }

  /** The MCP revision the link speaks: 2026-07-28 where the server does, else the 2025 one initialize agreed. */
  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion()
  }

  get closed(): boolean {
    return this.closedReason !== undefined
  }

  /** Every tool, page by page, within the page and tool caps. */
  async listTools(): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = []
    let cursor: string | undefined
    for (let page = 0; page < UPSTREAM_LIMITS.maxToolPages; page++) {
      let result: { tools: unknown[]; nextCursor?: string }
      try {
        result = cursor
          ? await this.client.listTools({ cursor })
          : await this.client.request({ method: 'tools/list', params: {} })
      } catch (err) {
        throw this.failure('tools/list failed', err)
      }
      tools.push(...(result.tools as UpstreamTool[]))
      if (tools.length > UPSTREAM_LIMITS.maxTools) throw this.failure(`more than ${UPSTREAM_LIMITS.maxTools} tools`)
      cursor = result.nextCursor
      if (!cursor) {
        if (this.spec.kind === 'http') this.paramHeaderTools.listed(tools)
        return tools
      }
    }
    throw this.failure(`tools/list did not end within ${UPSTREAM_LIMITS.maxToolPages} pages`)
  }

  /** The tools and what else the upstream declared (prompts, resources, templates); `problems`: lists that failed. */
  async listTable(): Promise<{ table: UpstreamTable; problems: string[] }> {
    const tools = await this.listTools()
    const { surface, problems } = await listSurface(this.client)
    return { table: { tools, ...surface }, problems }
  }

  /** One of the upstream's other methods, as its SDK client sends it; counted in flight like a call. */
  relay(method: RelayMethod, params: Record<string, unknown>, options: RouteCallOptions): Promise<RelayResult> {
    const listen = this.listen
    // 2026-07-28 has no resources/subscribe: the link's stream listens for the resource instead
    if (listen && (method === 'resources/subscribe' || method === 'resources/unsubscribe'))
      return this.inFlightWhile(() => listen.relay(method, String(params.uri)))
    const rounds = this.roundsOf(options)
    const sent = { signal: options.signal, timeout: this.callTimeoutMs, ...(rounds && { allowInputRequired: true }) }
    const request = (meta?: Record<string, unknown>) =>
      this.client.request({ method, params: { ...withMeta(params, meta), ...rounds } } as never, sent)
    return this.inFlightWhile(async () => {
      const result = (await this.relays.track(options.relay, request)) as RelayResult
      return rounds ? passedOn(result) : result
    })
  }

  callTool(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: RouteCallOptions,
  ): Promise<ToolCallResult> {
    return this.inFlightWhile(async () => {
      const params = args === undefined ? { name: upstreamName } : { name: upstreamName, arguments: args }
      const { relay } = options
      const rounds = this.roundsOf(options)
      // on a 2026-07-28 link, a caller who can be asked something is the SDK client's: it asks in rounds
      const direct = this.modern && (rounds || relay?.request) ? undefined : this.direct
      // `meta`: its progressToken (this connection's) and logLevel (call-relays.ts); a direct call listens to the
      // cancel itself (reading options.signal would make an AbortSignal)
      const call = async (meta?: Record<string, unknown>): Promise<ToolCallResult> => {
        if (direct) return direct.call(withMeta(params, meta), options)
        const toolDefinition = this.paramHeaderTools.definition(upstreamName)
        const sent = {
          signal: options.signal,
          timeout: this.callTimeoutMs,
          ...(toolDefinition && { toolDefinition }),
          ...(rounds && { allowInputRequired: true }),
        }
        const result = await this.client.callTool({ ...withMeta(params, meta), ...rounds }, sent)
        return (rounds ? passedOn(result) : result) as ToolCallResult
      }
      try {
        return await this.relays.track(relay, call)
      } catch (err) {
        throw this.timedOut(err, upstreamName) ?? err
      }
    })
  }

  /**
   * What goes back to the upstream of a 2026-07-28 link for a caller that answers rounds itself: its round passes
   * through (UpstreamInputRequired), instead of the SDK client asking the caller one request at a time.
   */
  private roundsOf(options: RouteCallOptions): UpstreamRound | undefined {
    return this.modern ? options.relay?.rounds : undefined
  }

  /** A request counted in flight (a swap drains them before the connection closes); none once it is gone. */
  private async inFlightWhile<T>(request: () => Promise<T>): Promise<T> {
    // the reason already says how it ended: no second account of the exit
    if (this.closedReason)
      throw new TuttiError(
        ErrorCodes.UPSTREAM_FAILED,
        `connector "${this.spec.key}": the upstream is gone (${this.closedReason})`,
      )
    this.inFlight++
    try {
      return await request()
    } finally {
      if (--this.inFlight === 0) this.drained?.()
    }
  }

  /** Any of its lists changed (tools, prompts, resources). */
  onToolsChanged(listener: () => void): void {
    this.news.changed.add(listener)
  }

  /** A resource the daemon subscribed to changed (notifications/resources/updated), by the upstream's URI. */
  onResourceUpdated(listener: (uri: string) => void): void {
    this.news.updated.add(listener)
  }

  /** Fires once when the connection ends for any reason other than close(). */
  onClosed(listener: (reason: string) => void): void {
    this.closeListeners.add(listener)
  }

  /** Let calls in flight finish (bounded), then close. */
  close(drainMs: number = UPSTREAM_LIMITS.drainTimeoutMs): Promise<void> {
    this.closing ??= (async () => {
      this.closeListeners.clear()
      this.news.clear()
      this.listen?.close()
      if (this.inFlight > 0) {
        await new Promise<void>((resolve) => {
          this.drained = resolve
          setTimeout(resolve, drainMs).unref()
        })
      }
      this.closedReason ??= 'closed'
      // closing a transport whose process is already gone may fail; the connection is closed either way
      await this.client.close().catch(() => undefined)
    })()
    return this.closing
  }

  describeExit(): string {
    return describeExit(this.spec, this.transport)
  }

  private onTransportClosed(): void {
    if (this.closedReason) return
    this.closedReason = this.describeExit()
    for (const listener of this.closeListeners) listener(this.closedReason)
  }

  private timedOut(err: unknown, upstreamName: string): TuttiError | undefined {
    return timedOut(this.spec, this.callTimeoutMs, err, upstreamName)
  }

  private failure(what: string, cause?: unknown): TuttiError {
    return failure(this.spec, this.transport, what, cause)
  }
}

/** An upstream's own input_required round, thrown for the caller's rounds to take (input-rounds.ts). */
function passedOn<T>(result: T): T {
  if (!isInputRequiredResult(result)) return result
  const { inputRequests, requestState } = result as { inputRequests?: Record<string, unknown>; requestState?: string }
  throw new UpstreamInputRequired(inputRequests ?? {}, requestState)
}
