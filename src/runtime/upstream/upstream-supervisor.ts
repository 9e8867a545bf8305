import { ErrorCodes, TuttiError } from '../errors.js'
import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'
import type { RouteClient, ToolCallResult, UpstreamTool } from '../registry/route.js'
import { backoffDelay, STABLE_AFTER_MS } from './backoff.js'
import { IdleStop } from './idle-stop.js'
import { openUpstreamConnection, type OpenUpstream, type UpstreamLink } from './upstream-link.js'
import type { UpstreamSpec } from './upstream-spec.js'

/**
 * One connector's upstream over its whole life: it owns the connection, and
 * decides when one is opened, restarted and stopped. Eager: started at once
 * and restarted after an exit or a failed start, with exponential backoff
 * that is forgiven only after the upstream stayed up for a while. Lazy:
 * started by the first call (concurrent first calls share one start) and
 * stopped after an idle period. It is the route client of the generations
 * built on it, and it knows nothing of the registry: what it learns it
 * reports through its events.
 */
export type Activation = { kind: 'eager' } | { kind: 'lazy'; idleMs: number }

export interface SupervisorEvents {
  /** The upstream listed its tools: after a start, and after its own tools/list_changed. */
  toolsListed(tools: UpstreamTool[], why: 'started' | 'changed'): void
  /** A start failed or the upstream went away; `retryAt` when a restart is scheduled. */
  failed(reason: string, failures: number, retryAt?: string): void
  /** A lazy upstream was stopped (idle, or it exited); the next call starts it again. */
  stopped(reason: string): void
  /** The server wants an OAuth sign-in no grant answers: nothing is retried, only `connect` helps. */
  signInRequired(reason: string): void
}

export type UpstreamState = 'running' | 'stopped' | 'restarting'

export { openUpstreamConnection, type OpenUpstream, type UpstreamLink } from './upstream-link.js'

/** Bursts of tools/list_changed are listed once. */
const LIST_CHANGED_COALESCE_MS = 50

export class UpstreamSupervisor implements RouteClient {
  private connection?: UpstreamLink
  private starting?: Promise<UpstreamLink>
  private connecting?: AbortController
  private restartTimer?: NodeJS.Timeout
  /** Lazy: the idle period, and the close of an idle upstream. */
  private readonly idle: IdleStop
  private changeTimer?: NodeJS.Timeout
  private inFlight = 0
  private upSince = 0
  private disposed = false
  /** Consecutive failures (failed starts, exits before STABLE_AFTER_MS): the backoff exponent. */
  failures = 0
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

  /**
   * A start now, for a caller that commits the table itself: eager ones,
   * and lazy ones whose tools are not known yet (a lazy one then stops when
   * idle). Resolves with the tool table; on failure, throws and keeps
   * retrying with backoff (later starts report through `toolsListed`).
   */
  async start(): Promise<UpstreamTool[]> {
    try {
      const conn = await this.open()
      const tools = await this.adopt(conn, false)
      this.armIdle()
      return tools
    } catch (err) {
      this.failed(err, 'start')
      throw err
    }
  }

  async callTool(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: { signal?: AbortSignal },
  ): Promise<ToolCallResult> {
    this.inFlight++
    try {
      const conn =
        this.connection && !this.connection.closed && !this.idle.closing ? this.connection : await this.whenNeeded()
      return await conn.callTool(upstreamName, args, options)
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
    clearTimeout(this.changeTimer)
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

  /** A connection that answered initialize: list its tools, watch it, and report. */
  private async adopt(conn: UpstreamLink, report: boolean): Promise<UpstreamTool[]> {
    let tools: UpstreamTool[]
    try {
      tools = await conn.listTools()
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
    this.log.info('upstream started', { connector: this.spec.key, pid: conn.pid, tools: tools.length })
    conn.onClosed((why) => this.onExit(conn, why))
    conn.onToolsChanged(() => this.onListChanged(conn))
    if (previous && previous !== conn)
      void bestEffort(previous.close(), this.log, 'closing the previous upstream connection', {
        connector: this.spec.key,
      })
    if (report) this.events.toolsListed(tools, 'started')
    return tools
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

  private onListChanged(conn: UpstreamLink): void {
    clearTimeout(this.changeTimer)
    this.changeTimer = setTimeout(() => {
      if (conn !== this.connection || conn.closed || this.disposed) return
      conn.listTools().then(
        (tools) => this.events.toolsListed(tools, 'changed'),
        (err: Error) =>
          this.log.error('tools/list after the upstream said its tools changed failed; the previous table stays', {
            connector: this.spec.key,
            error: this.log.redactor.redactString(err.message),
          }),
      )
    }, LIST_CHANGED_COALESCE_MS)
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
