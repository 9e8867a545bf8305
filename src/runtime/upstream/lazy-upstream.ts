import type { RouteClient, ToolCallResult, UpstreamTool } from '../registry/route.js'
import { UpstreamConnection } from './upstream-connection.js'
import type { UpstreamSpec } from './upstream-spec.js'

export interface LazyUpstreamHooks {
  /** Runs once per start, before the first call is forwarded (the route can be rebuilt here). */
  onStarted(connection: UpstreamConnection, tools: UpstreamTool[]): Promise<void>
  onStopped(reason: string): void
  /** The running upstream announced tools/list_changed. */
  onToolsChanged(connection: UpstreamConnection): void
}

/**
 * A route client that dials its upstream on the first tools/call (seed 004's
 * lazy owner-context dial). Concurrent first calls share one start; after
 * `idleMs` without calls the upstream is closed, and the next call starts it
 * again. The route itself (from the declaration) stays published throughout.
 */
export class LazyUpstream implements RouteClient {
  private connection?: UpstreamConnection
  private starting?: Promise<UpstreamConnection>
  private inFlight = 0
  private idleTimer?: NodeJS.Timeout
  private disposed = false
  /** How many times the upstream was started (for status and tests). */
  starts = 0

  constructor(
    private readonly spec: UpstreamSpec,
    private readonly idleMs: number,
    private readonly hooks: LazyUpstreamHooks,
  ) {}

  get running(): boolean {
    return !!this.connection && !this.connection.closed
  }

  get pid(): number | undefined {
    return this.running ? this.connection!.pid : undefined
  }

  async callTool(upstreamName: string, args: Record<string, unknown> | undefined, options: { signal?: AbortSignal }): Promise<ToolCallResult> {
    this.inFlight++
    clearTimeout(this.idleTimer)
    try {
      const conn = await this.ensureStarted()
      return await conn.callTool(upstreamName, args, options)
    } finally {
      if (--this.inFlight === 0) this.armIdle()
    }
  }

  ensureStarted(): Promise<UpstreamConnection> {
    if (this.connection && !this.connection.closed) return Promise.resolve(this.connection)
    this.starting ??= this.start().finally(() => {
      this.starting = undefined
    })
    return this.starting
  }

  private async start(): Promise<UpstreamConnection> {
    const conn = await UpstreamConnection.open(this.spec)
    try {
      const tools = await conn.listTools()
      this.starts++
      conn.onClosed((reason) => {
        if (this.connection === conn) this.connection = undefined
        this.hooks.onStopped(reason)
      })
      conn.onToolsChanged(() => this.hooks.onToolsChanged(conn))
      this.connection = conn
      await this.hooks.onStarted(conn, tools)
      if (this.disposed) await this.stop()
      return conn
    } catch (err) {
      await conn.close(0)
      throw err
    }
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer)
    if (!this.running || this.idleMs <= 0) return
    this.idleTimer = setTimeout(() => void this.stop('idle'), this.idleMs)
    this.idleTimer.unref()
  }

  /** Close the upstream (calls in flight drain first); the next call starts it again. */
  async stop(reason = 'stopped'): Promise<void> {
    clearTimeout(this.idleTimer)
    const conn = this.connection
    this.connection = undefined
    if (conn) {
      await conn.close()
      this.hooks.onStopped(reason)
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true
    await this.stop('disposed')
  }
}
