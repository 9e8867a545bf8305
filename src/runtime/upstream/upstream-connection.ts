import { Client, SdkError, SdkErrorCode, type Transport } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'
import { NO_DIRECT_CALLS_ENV, switchedOff, UPSTREAM_CLIENT_INFO } from '../names.js'
import type { RouteCallOptions, RouteClient, ToolCallResult, UpstreamTool } from '../registry/route.js'
import { DIRECT_CALL_REVISIONS, DirectCalls } from './direct-calls.js'
import { httpTransport } from './http-transport.js'
import { missingVariableHint } from './missing-variable.js'
import { ParamHeaderTools } from './param-header-tools.js'
import { ProcessGroupStdioTransport } from './stdio-transport.js'
import { isUnauthorized, unauthorizedFailure } from './unauthorized.js'
import type { UpstreamSpec } from './upstream-spec.js'
import { nativeModuleHint } from './native-module-hint.js'
import { stderrSummary } from './stderr-summary.js'

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

/** The start took longer than its bound (mcp.timeouts.startupSeconds, else UPSTREAM_LIMITS.connectTimeoutMs). */
class StartupTimeout extends Error {}

/** A bound as a person reads it: "1 s", "1.5 s", "600 s". */
const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`

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
  /** tools/call without the SDK client's request machinery: stdio upstreams of the 2025 era. */
  private direct?: DirectCalls
  /** Remote upstreams: the listed tools that declare `x-mcp-header` params, for the SDK to send as `Mcp-Param-*`. */
  private readonly paramHeaderTools = new ParamHeaderTools()

  private constructor(
    readonly spec: UpstreamSpec,
    private readonly client: Client,
    private readonly transport: Transport,
  ) {}

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
    const client = new Client(CLIENT_INFO, spec.kind === 'http' ? { versionNegotiation: { mode: 'auto' } } : {})
    const conn = new UpstreamConnection(spec, client, transport)
    client.onclose = () => {
      conn.direct?.connectionClosed()
      conn.onTransportClosed()
    }
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      for (const listener of conn.changeListeners) listener()
    })
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const startupMs = spec.timeouts?.startupMs ?? UPSTREAM_LIMITS.connectTimeoutMs
    try {
      await Promise.race([
        client.connect(transport),
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

  async callTool(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: RouteCallOptions,
  ): Promise<ToolCallResult> {
    // the reason already says how it ended: no second account of the exit
    if (this.closedReason)
      throw new TuttiError(
        ErrorCodes.UPSTREAM_FAILED,
        `connector "${this.spec.key}": the upstream is gone (${this.closedReason})`,
      )
    this.inFlight++
    try {
      const params = args === undefined ? { name: upstreamName } : { name: upstreamName, arguments: args }
      if (this.direct) return await this.direct.call(params, options)
      const toolDefinition = this.paramHeaderTools.definition(upstreamName)
      const timeout = this.callTimeoutMs
      const sent = { signal: options.signal, timeout, ...(toolDefinition ? { toolDefinition } : {}) }
      return (await this.client.callTool(params, sent)) as ToolCallResult
    } catch (err) {
      throw this.timedOut(err, upstreamName) ?? err
    } finally {
      if (--this.inFlight === 0) this.drained?.()
    }
  }

  onToolsChanged(listener: () => void): void {
    this.changeListeners.add(listener)
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
    if (this.transport instanceof ProcessGroupStdioTransport) {
      const tail = this.transport.stderrTail()
      const native = nativeModuleHint(tail)
      const hint = missingVariableHint(this.spec.key, tail)
      return `${this.transport.exit() ?? 'connection closed'}${native ? `; ${native}` : stderrSummary(tail)}${hint}`
    }
    return 'connection closed'
  }

  private onTransportClosed(): void {
    if (this.closedReason) return
    this.closedReason = this.describeExit()
    for (const listener of this.closeListeners) listener(this.closedReason)
  }

  /**
   * Why the server never answered initialize, as a person would put it: the exit and its stderr, not the SDK's
   * "Connection closed".
   */
  private connectFailure(cause: unknown): TuttiError {
    // the process exits because the start timed out and it was stopped: the timeout is the reason, not that exit
    if (cause instanceof StartupTimeout) {
      return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `could not connect: ${cause.message}`, { cause })
    }
    if (this.transport instanceof ProcessGroupStdioTransport && this.transport.exit()) {
      const exit = this.transport.exit()!
      const tail = this.transport.stderrTail()
      const said = nativeModuleHint(tail) ?? stderrSummary(tail).replace(/^; stderr: /, '')
      const stderr = said ? `: ${said}` : ''
      const hint = missingVariableHint(this.spec.key, tail)
      const message = exit.startsWith('command ') ? exit : `${exit} before it answered initialize${stderr}${hint}`
      return new TuttiError(ErrorCodes.UPSTREAM_FAILED, message, { cause })
    }
    return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `could not connect: ${(cause as Error).message}`, { cause })
  }

  /** A call the upstream did not answer in time, said with the bound and where it is set; else undefined. */
  private timedOut(err: unknown, upstreamName: string): TuttiError | undefined {
    // a cancel is a RequestTimeout to the SDK as well; only its own timer's carries the bound
    const bound = (err as SdkError).data as { timeout?: unknown } | undefined
    if (!(err instanceof SdkError) || err.code !== SdkErrorCode.RequestTimeout) return undefined
    if (bound?.timeout === undefined) return undefined
    const where = this.spec.timeouts?.toolCallMs ? 'mcp.timeouts.toolCallSeconds' : "tutti's default"
    const within = `${seconds(this.callTimeoutMs)} (${where})`
    const tool = `connector "${this.spec.key}": tool "${upstreamName}"`
    const message = `${tool} timed out: no answer within ${within}; the call was cancelled`
    return new TuttiError(ErrorCodes.UPSTREAM_FAILED, message, { cause: err })
  }

  private failure(what: string, cause?: unknown): TuttiError {
    const detail = cause ? `: ${(cause as Error).message}` : ''
    const described =
      this.transport instanceof ProcessGroupStdioTransport && this.transport.exit() ? this.describeExit() : ''
    const exit = described && !detail.includes(described) && !what.includes(described) ? ` (${described})` : ''
    return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `connector "${this.spec.key}": ${what}${detail}${exit}`, {
      cause,
    })
  }
}
