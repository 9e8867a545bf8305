import { Client, type Transport } from '@modelcontextprotocol/client'
import { randomBytes } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import { NO_DIRECT_CALLS_ENV, switchedOff, UPSTREAM_CLIENT_INFO } from '../names.js'
import type { RelayResult, RouteCallOptions, RouteClient, ToolCallResult, UpstreamTool } from '../registry/route.js'
import type { UpstreamTable } from '../registry/route.js'
import type { RelayMethod } from '../registry/surface.js'
import type { RouteTasks } from '../registry/tasks.js'
import { DIRECT_CALL_REVISIONS, DirectCalls } from './direct-calls.js'
import { httpTransport } from './http-transport.js'
import { ParamHeaderTools } from './param-header-tools.js'
import { ProcessGroupStdioTransport } from './stdio-transport.js'
import { isUnauthorized, unauthorizedFailure } from './unauthorized.js'
import type { UpstreamSpec } from './upstream-spec.js'
import { connectFailure, describeExit, failure, seconds, StartupTimeout, timedOut } from './connection-failures.js'
import { listSurface } from './surface-listing.js'
import { CallRelays, UPSTREAM_CLIENT_CAPABILITIES, withMeta } from './call-relays.js'
import { ExtensionTasks, relaysExtensionTasks, type Tracked } from './extension-tasks.js'
import { UpstreamTasks } from './upstream-tasks.js'

export const UPSTREAM_LIMITS = {
  maxMessageBytes: 16 * 1024 * 1024,
  maxToolPages: 100,
  maxTools: 5_000,
  connectTimeoutMs: 30_000,
  callTimeoutMs: 10 * 60_000,
  closeGraceMs: 2_000,
  drainTimeoutMs: 30_000,
} as const

const CLIENT_INFO = { ...UPSTREAM_CLIENT_INFO }

/** Where a stdio server's stderr goes, line by line (the connector's log). */
export type StderrLines = (line: string) => void

/**
 * One live session with a connector's upstream MCP server, over stdio (own
 * process group) or Streamable HTTP. It is the route client of the
 * generations built on it: calls count in flight so a swap can drain them
 * before the connection closes.
 */
export class UpstreamConnection implements RouteClient {
  private inFlight = 0
  private drained?: () => void
  private closing?: Promise<void>
  private closedReason?: string
  private readonly closeListeners = new Set<(reason: string) => void>()
  private readonly changeListeners = new Set<() => void>()
  private readonly updateListeners = new Set<(uri: string) => void>()
  /** tools/call without the SDK client's request machinery: stdio upstreams of the 2025 era. */
  private direct?: DirectCalls
  /** Remote upstreams: the listed tools that declare `x-mcp-header` params, for the SDK to send as `Mcp-Param-*`. */
  private readonly paramHeaderTools = new ParamHeaderTools()
  /** Its requests in flight for sessions, and where what the upstream sends about them goes. */
  private readonly relays: CallRelays
  /** Its tasks, counted in flight like calls; the (random) epoch tells its task ids from another connection's. */
  readonly tasks: RouteTasks

  private constructor(
    readonly spec: UpstreamSpec,
    private readonly client: Client,
    private readonly transport: Transport,
  ) {
    this.relays = new CallRelays(spec.key, spec.kind === 'http')
    this.relays.install(client)
    const epoch = randomBytes(6).toString('base64url')
    const legacy = new UpstreamTasks(client, spec.key, epoch, this.callTimeoutMs)
    const tracked: Tracked = (options, request) => this.relays.track(options.relay, request)
    const extension = new ExtensionTasks(client, spec.key, epoch, this.callTimeoutMs, tracked)
    // the wire its capabilities declare: SEP-2663's extension, else 2025-11-25's tasks
    const wire = () => (relaysExtensionTasks(client) ? extension : legacy)
    this.tasks = {
      call: (name, args, options) => this.inFlightWhile(() => wire().call(name, args, options)),
      request: (request, options) => this.inFlightWhile(() => wire().request(request, options)),
    }
  }

  /** `signal` abandons a connect that is no longer wanted (the connector was uninstalled or changed meanwhile). */
  static async open(spec: UpstreamSpec, signal?: AbortSignal, onStderrLine?: StderrLines): Promise<UpstreamConnection> {
    const transport: Transport =
      spec.kind === 'stdio'
        ? new ProcessGroupStdioTransport({
            command: spec.command,
            args: spec.args,
            cwd: spec.cwd,
            env: spec.env,
            maxMessageBytes: UPSTREAM_LIMITS.maxMessageBytes,
            closeGraceMs: UPSTREAM_LIMITS.closeGraceMs,
            ...(onStderrLine ? { onStderrLine } : {}),
          })
        : httpTransport(spec)
    const client = new Client(CLIENT_INFO, {
      capabilities: UPSTREAM_CLIENT_CAPABILITIES,
      ...(spec.kind === 'http' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    })
    const conn = new UpstreamConnection(spec, client, transport)
    client.onclose = () => {
      conn.direct?.connectionClosed()
      conn.onTransportClosed()
    }
    // any of its lists changed: the whole table is listed again, as one new generation
    const changed = () => {
      for (const listener of conn.changeListeners) listener()
    }
    client.setNotificationHandler('notifications/tools/list_changed', changed)
    client.setNotificationHandler('notifications/prompts/list_changed', changed)
    client.setNotificationHandler('notifications/resources/list_changed', changed)
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      for (const listener of conn.updateListeners) listener(n.params.uri)
    })
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const startupMs = spec.timeouts?.startupMs ?? UPSTREAM_LIMITS.connectTimeoutMs
    try {
      await Promise.race([
        // no call's async context: a lazy upstream's pipes and streams must not carry the call that started it
        CallRelays.outsideCalls(() => client.connect(transport)),
        new Promise((_, reject) => {
          const named = spec.timeouts?.startupMs ? ' (mcp.timeouts.startupSeconds)' : ''
          const timedOut = () => reject(new StartupTimeout(`no initialize answer within ${seconds(startupMs)}${named}`))
          timer = setTimeout(timedOut, startupMs)
          onAbort = () =>
            reject(
              new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'the connect was abandoned: the connector changed meanwhile'),
            )
          if (signal?.aborted) onAbort()
          else signal?.addEventListener('abort', onAbort, { once: true })
        }),
      ])
    } catch (err) {
      // the connect already failed, and that is what is reported; a second failure from closing adds nothing
      await transport.close().catch(() => undefined)
      const abandoned = 'the connect was abandoned: the connector changed meanwhile'
      if (signal?.aborted) throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, abandoned, { cause: err })
      // a 401 without a grant: the server may offer an OAuth sign-in the manifest does not mention
      if (spec.kind === 'http' && !spec.oauth && isUnauthorized(err)) throw await unauthorizedFailure(spec, err)
      throw conn.connectFailure(err)
    } finally {
      clearTimeout(timer)
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    }
    // TUTTI_NO_DIRECT_CALLS=1: every call through the SDK client, as on an HTTP upstream
    const revision = client.getNegotiatedProtocolVersion() ?? ''
    const direct = !switchedOff(NO_DIRECT_CALLS_ENV) && DIRECT_CALL_REVISIONS.has(revision)
    if (transport instanceof ProcessGroupStdioTransport && direct) {
      conn.direct = new DirectCalls(transport, client, conn.callTimeoutMs)
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
    const sent = { signal: options.signal, timeout: this.callTimeoutMs }
    const request = (meta?: Record<string, unknown>) =>
      this.client.request({ method, params: withMeta(params, meta) } as never, sent)
    return this.inFlightWhile(async () => (await this.relays.track(options.relay, request)) as RelayResult)
  }

  callTool(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: RouteCallOptions,
  ): Promise<ToolCallResult> {
    return this.inFlightWhile(async () => {
      const params = args === undefined ? { name: upstreamName } : { name: upstreamName, arguments: args }
      const { relay } = options
      const direct = this.direct
      // `meta`: its progressToken (this connection's) and logLevel (call-relays.ts); a direct call listens to the
      // cancel itself (reading options.signal would make an AbortSignal)
      const call = async (meta?: Record<string, unknown>): Promise<ToolCallResult> => {
        if (direct) return direct.call(withMeta(params, meta), options)
        const toolDefinition = this.paramHeaderTools.definition(upstreamName)
        const sent = { signal: options.signal, timeout: this.callTimeoutMs, ...(toolDefinition && { toolDefinition }) }
        return (await this.client.callTool(withMeta(params, meta), sent)) as ToolCallResult
      }
      try {
        return await this.relays.track(relay, call)
      } catch (err) {
        throw this.timedOut(err, upstreamName) ?? err
      }
    })
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
    this.changeListeners.add(listener)
  }

  /** A resource the daemon subscribed to changed (notifications/resources/updated), by the upstream's URI. */
  onResourceUpdated(listener: (uri: string) => void): void {
    this.updateListeners.add(listener)
  }

  /** Fires once when the connection ends for any reason other than close(). */
  onClosed(listener: (reason: string) => void): void {
    this.closeListeners.add(listener)
  }

  /** Let calls in flight finish (bounded), then close. */
  close(drainMs: number = UPSTREAM_LIMITS.drainTimeoutMs): Promise<void> {
    this.closing ??= (async () => {
      this.closeListeners.clear()
      this.changeListeners.clear()
      this.updateListeners.clear()
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

  private connectFailure(cause: unknown): TuttiError {
    return connectFailure(this.spec, this.transport, cause)
  }

  private timedOut(err: unknown, upstreamName: string): TuttiError | undefined {
    return timedOut(this.spec, this.callTimeoutMs, err, upstreamName)
  }

  private failure(what: string, cause?: unknown): TuttiError {
    return failure(this.spec, this.transport, what, cause)
  }
}
