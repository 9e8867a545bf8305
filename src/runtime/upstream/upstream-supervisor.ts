import { ErrorCodes, TuttiError } from '../errors.js'
import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'
import type { RelayResult, RouteCallOptions, RouteClient, ToolCallResult } from '../registry/route.js'
import type { RouteSignInTarget, UpstreamTable } from '../registry/route.js'
import type { RelayMethod } from '../registry/surface.js'
import { backoffDelay, STABLE_AFTER_MS } from './backoff.js'
import { IdleStop } from './idle-stop.js'
import { supervisedTasks } from './live-tasks.js'
import { signInTargetOf } from './sign-in-target.js'
import { TableListing } from './table-listing.js'
import { openUpstreamConnection, type OpenUpstream, type SupervisorEvents, type UpstreamLink } from './upstream-link.js'
import type { UpstreamSpec } from './upstream-spec.js'

/**
 * One connector's upstream over its whole life: it owns the connection, and decides when one is opened, restarted
 * and stopped. Eager: started at once and restarted after an exit or a failed start, with exponential backoff that
 * is forgiven only after the upstream stayed up for a while. Lazy: started by the first call (concurrent first calls
 * share one start) and stopped after an idle period. It is the route client of the generations built on it, and it
 * knows nothing of the registry: what it learns it reports through its events.
 */
export type Activation = { kind: 'eager' } | { kind: 'lazy'; idleMs: number }

export type UpstreamState = 'running' | 'stopped' | 'restarting'

export { openUpstreamConnection, type OpenUpstream, type SupervisorEvents, type UpstreamLink } from './upstream-link.js'

export class UpstreamSupervisor implements RouteClient {
  private connection?: UpstreamLink
  private starting?: Promise<UpstreamLink>
  private connecting?: AbortController
  private restartTimer?: NodeJS.Timeout
  /** Lazy: the idle period, and the close of an idle upstream. */
  private readonly idle: IdleStop
  private readonly listing: TableListing
  private inFlight = 0
  private upSince = 0
  private disposed = false
  /** Consecutive failures (failed starts, exits before STABLE_AFTER_MS): the backoff exponent. */
  failures = 0
  /** Its tasks, on the running connection; one live there keeps a lazy upstream from idling (live-tasks.ts). */
  readonly tasks = supervisedTasks<UpstreamLink>({ use: (work) => this.use(work), live: () => this.idle.tasks })
  /** Successful starts, and restarts attempted after an exit or a failed start. */
  starts = 0
  restarts = 0
  nextRetryAt?: string
  lastError?: string

  constructor(
    readonly spec: UpstreamSpec,
    readonly activation: Activation,
    private readonly events: SupervisorEvents,
    private readonly log: Logger,
    private readonly openLink: OpenUpstream = openUpstreamConnection,
  ) {
    this.listing = new TableListing(spec.key, log, (table) => this.events.toolsListed(table, 'changed'))
    this.idle = new IdleStop(activation.kind === 'lazy' ? activation.idleMs : 0, {
      idleConnection: () => (this.inFlight === 0 ? this.connection : undefined),
      closed: (conn) => {
        if (this.connection === conn) this.connection = undefined
      },
      stopped: () => this.events.stopped('idle'),
    })
  }

  get state(): UpstreamState {
    if (this.restartTimer) return 'restarting'
    // an idle upstream being closed refuses calls (closed), but its process is there until the close ends
    if (this.idle.closing) return 'running'
    return this.connection && !this.connection.closed ? 'running' : 'stopped'
  }

  get pid(): number | undefined {
    return this.state === 'running' ? this.connection!.pid : undefined
  }

  /** The MCP revision of the running link. */
  get protocolVersion(): string | undefined {
    return this.state === 'running' ? this.connection!.protocolVersion : undefined
  }

  get signInTarget(): RouteSignInTarget | undefined {
    return signInTargetOf(this.spec)
  }

  /**
   * A start now, for a caller that commits the table itself: eager ones, and lazy ones whose table is not known yet
   * (a lazy one then stops when idle). Resolves with the table; on failure, throws and keeps retrying with backoff.
   */
  async start(): Promise<UpstreamTable> {
    try {
      const conn = await this.open()
      const table = await this.adopt(conn, false)
      this.armIdle()
      return table
    } catch (err) {
      this.failed(err, 'start')
      throw err
    }
  }

  callTool(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: RouteCallOptions,
  ): Promise<ToolCallResult> {
    return this.use((conn) => conn.callTool(upstreamName, args, options))
  }

  relay(method: RelayMethod, params: Record<string, unknown>, options: RouteCallOptions): Promise<RelayResult> {
    return this.use((conn) => conn.relay(method, params, options))
  }

  /** A request on the running connection, or (lazy) on one started for it; the idle clock starts once none is left. */
  private async use<T>(request: (conn: UpstreamLink) => Promise<T>): Promise<T> {
    this.inFlight++
    try {
      const conn =
        this.connection && !this.connection.closed && !this.idle.closing ? this.connection : await this.whenNeeded()
      return await request(conn)
    } finally {
      if (--this.inFlight === 0) {
        this.idle.lastUse = Date.now()
        this.armIdle()
      }
    }
  }

  /** Its outcome is no longer wanted: a connect in progress is given up, and nothing restarts it. */
  abandonConnect(): void {
    this.disposed = true
    clearTimeout(this.restartTimer)
    this.restartTimer = undefined
    this.connecting?.abort()
  }

  /** Close the upstream, letting calls in flight finish (bounded); nothing restarts it afterwards. */
  async dispose(drainMs?: number): Promise<void> {
    this.abandonConnect()
    this.idle.cancel()
    this.listing.cancel()
    this.restartTimer = undefined
    this.nextRetryAt = undefined
    const conn = this.connection
    this.connection = undefined
    await conn?.close(drainMs)
  }

  /** Lazy: start on demand (shared by concurrent calls). Eager: the connection is being restarted. */
  private whenNeeded(): Promise<UpstreamLink> {
    if (this.disposed)
      return Promise.reject(
        new TuttiError(ErrorCodes.UPSTREAM_FAILED, `connector "${this.spec.key}": the upstream was closed`),
      )
    if (this.activation.kind === 'eager') {
      return Promise.reject(
        new TuttiError(
          ErrorCodes.UPSTREAM_FAILED,
          `connector "${this.spec.key}": the upstream is not running (${this.lastError ?? 'starting'})`,
        ),
      )
    }
    this.starting ??= (async () => {
      try {
        await this.idle.closing
        const conn = await this.open()
        await this.adopt(conn, true)
        return conn
      } catch (err) {
        // the next call tries again: a call-driven start is not retried in the background
        this.failed(err, 'call')
        throw err
      }
    })().finally(() => {
      this.starting = undefined
    })
    return this.starting
  }

  private async open(): Promise<UpstreamLink> {
    this.connecting = new AbortController()
    try {
      return await this.openLink(this.spec, this.connecting.signal)
    } finally {
      this.connecting = undefined
    }
  }

  /** A connection that answered initialize: list its table, watch it, and report. */
  private async adopt(conn: UpstreamLink, report: boolean): Promise<UpstreamTable> {
    let table: UpstreamTable
    try {
      table = await this.listing.list(conn)
    } catch (err) {
      // closed, then rethrown below
      await bestEffort(conn.close(0), this.log, 'closing an upstream whose tools/list failed', {
        connector: this.spec.key,
      })
      throw err
    }
    if (this.disposed) {
      await conn.close(0)
      throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'the connect was abandoned: the connector changed meanwhile')
    }
    const previous = this.connection
    this.connection = conn
    this.upSince = Date.now()
    this.idle.lastUse = this.upSince
    this.starts++
    this.nextRetryAt = undefined
    this.log.info('upstream started', { connector: this.spec.key, pid: conn.pid, tools: table.tools.length })
    conn.onClosed((why) => this.onExit(conn, why))
    conn.onToolsChanged(() =>
      this.listing.changed(conn, () => conn === this.connection && !conn.closed && !this.disposed),
    )
    conn.onResourceUpdated((uri) => this.events.resourceUpdated?.(uri))
    if (previous && previous !== conn)
      void bestEffort(previous.close(), this.log, 'closing the previous upstream connection', {
        connector: this.spec.key,
      })
    if (report) this.events.toolsListed(table, 'started')
    return table
  }

  private onExit(conn: UpstreamLink, why: string): void {
    if (conn !== this.connection || this.disposed) return
    this.connection = undefined
    const reason = this.log.redactor.redactString(`upstream ${why}`)
    this.lastError = reason
    if (this.activation.kind === 'lazy') {
      // the next call starts it again
      this.events.stopped(reason)
      return
    }
    // only an upstream that stayed up for a while has earned a quick restart
    if (Date.now() - this.upSince >= STABLE_AFTER_MS) this.failures = 0
    this.failures++
    this.log.warn('upstream exited; restarting with backoff', {
      connector: this.spec.key,
      reason,
      failures: this.failures,
    })
    this.events.failed(reason, this.failures, this.scheduleRestart())
  }

  /** A failed start: remembered, reported, and (eager) retried after the backoff. */
  private failed(err: unknown, phase: string): void {
    if (this.disposed) {
      this.log.info('upstream start given up', {
        connector: this.spec.key,
        phase,
        reason: 'the connect was abandoned: the connector changed meanwhile',
      })
      return
    }
    const reason = this.log.redactor.redactString((err as Error).message)
    this.lastError = reason
    // a server that wants a sign-in is not retried: only `connect` helps
    if (err instanceof TuttiError && err.code === ErrorCodes.OAUTH_NEEDS_AUTH) return this.events.signInRequired(reason)
    this.failures++
    this.log.warn(`upstream ${phase} failed`, { connector: this.spec.key, failures: this.failures, error: reason })
    this.events.failed(reason, this.failures, phase === 'call' ? undefined : this.scheduleRestart())
  }

  private scheduleRestart(): string | undefined {
    if (this.disposed) return undefined
    if (this.restartTimer) return this.nextRetryAt
    const delay = backoffDelay(this.failures - 1)
    this.nextRetryAt = new Date(Date.now() + delay).toISOString()
    this.log.info('restart scheduled', { connector: this.spec.key, failures: this.failures, delayMs: delay })
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined
      if (this.disposed || this.connection) return
      this.restarts++
      void this.open().then(
        (conn) =>
          this.adopt(conn, true).then(
            () => this.armIdle(),
            (err: unknown) => this.failed(err, 'restart'),
          ),
        (err: unknown) => this.failed(err, 'restart'),
      )
    }, delay)
    this.restartTimer.unref()
    return this.nextRetryAt
  }

  private armIdle(): void {
    if (this.activation.kind === 'lazy' && this.connection) this.idle.arm()
  }
}
