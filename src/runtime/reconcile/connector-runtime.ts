import { createHash } from 'node:crypto'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { LoadedRelease } from '../manifest/load.js'
import type { ConnectorState, InterfaceStatus } from '../protocol/connector-state.js'
import { buildRoute } from '../registry/build-route.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { compareToolTables, type ToolDifference } from '../registry/declared-tools.js'
import type { RouteClient, UpstreamTool } from '../registry/route.js'
import type { ShimPublisher } from '../shims/shim-publisher.js'
import { LazyUpstream } from '../upstream/lazy-upstream.js'
import { UpstreamConnection } from '../upstream/upstream-connection.js'
import type { UpstreamSpec } from '../upstream/upstream-spec.js'
import { backoffDelay, STABLE_AFTER_MS, WITHDRAW_AFTER_FAILURES } from './backoff.js'

export interface DesiredConnector {
  release: LoadedRelease
  digest: string
  spec: UpstreamSpec | undefined
  /** Declared settings with their values (for status; the spec already carries them). */
  settings?: Record<string, string>
}

/** The route client of a connector without an MCP server: it has no tools, so it is never called. */
const NO_UPSTREAM: RouteClient = {
  callTool: async () => {
    throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'this connector has no MCP server')
  },
}

export function specHash(desired: DesiredConnector): string {
  return createHash('sha256').update(desired.digest).update(JSON.stringify(desired.spec ?? null)).digest('hex')
}

/**
 * One active connector inside the daemon: its upstream connection and the
 * route generations built on it. Builds happen off to the side and are
 * committed whole; a failed build leaves the previous generation serving.
 * It restarts a crashed upstream with exponential backoff and rebuilds the
 * route when the upstream says its tools changed. All work for one
 * connector is serialized by the Reconciler's per-key queue (`enqueue`).
 */
export class ConnectorRuntime {
  status: InterfaceStatus = 'starting'
  error?: string
  generation = 0
  toolCount = 0
  lastChange = new Date().toISOString()
  hash?: string
  desired?: DesiredConnector
  /** Generation of the published CLI shim (0: none), and the desired state it was published for. */
  shimGeneration = 0
  private shimHash?: string
  shimError?: string
  /** The lazy route client, when this connector's activation is lazy. */
  lazy?: LazyUpstream
  /** Upstream restarts after an exit (for status). */
  restarts = 0
  /** The last failure, kept after a later success (for status). */
  lastError?: string
  private readonly statusListeners = new Set<() => void>()
  /** Declared (manifest) against upstream tools, as of the last time the upstream listed them. */
  declaredCheck?: { checkedAt: string; differences: ToolDifference[] }
  private connection?: UpstreamConnection
  /** Aborts the connect of the build in progress, once its outcome can no longer be committed. */
  private connecting?: AbortController
  /** Consecutive failures (failed starts, and exits before STABLE_AFTER_MS): the backoff exponent. */
  private failures = 0
  /** When the current connection was committed (an exit after STABLE_AFTER_MS forgives the failures). */
  private upSince = 0
  /** When the next restart attempt is due (for status). */
  nextRetryAt?: string
  private restartTimer?: NodeJS.Timeout
  private changeTimer?: NodeJS.Timeout
  private disposed = false

  constructor(
    readonly key: string,
    private readonly registry: ConnectorMCPRegistry,
    private readonly shims: ShimPublisher,
    private readonly log: Logger,
    private readonly enqueue: (work: () => Promise<void>) => Promise<void>,
  ) {}

  get upstreamState(): ConnectorState['upstream'] {
    if (!this.desired?.spec) return 'none'
    if (this.restartTimer) return 'restarting'
    if (this.lazy) return this.lazy.running ? 'running' : 'stopped'
    return this.connection && !this.connection.closed ? 'running' : 'stopped'
  }

  get pid(): number | undefined {
    return this.lazy ? this.lazy.pid : this.connection?.pid
  }

  private get declared(): UpstreamTool[] | undefined {
    return this.desired?.release.manifest.mcp?.tools as UpstreamTool[] | undefined
  }

  /** Bring this connector to `desired` (a no-op when nothing that matters changed). */
  async apply(desired: DesiredConnector): Promise<void> {
    const hash = specHash(desired)
    if (hash !== this.hash || this.status !== 'ready') {
      this.clearRestart()
      if (hash !== this.hash) this.failures = 0
      this.desired = desired
      this.hash = hash
      // a failed start is retried with the same backoff as a crash
      if (!(await this.build('reconcile')) && this.hash === hash && !this.disposed) this.retryLater()
      if (this.hash !== hash || this.disposed) return
    }
    await this.ensureShim()
  }

  /**
   * The CLI depends on the connector being active, not on its MCP server
   * being healthy: the shim is published whatever the build's outcome, once
   * per desired state, and put back if it was deleted behind our back.
   */
  private async ensureShim(): Promise<void> {
    const desired = this.desired
    const cli = desired?.release.manifest.cli
    if (!desired || !cli) return
    if (this.shimHash === this.hash && (await this.shims.publishedGeneration(this.key)) === this.shimGeneration) return
    const generation = this.generation || this.shimGeneration || this.registry.nextGeneration(this.key)
    try {
      await this.shims.publish({ key: this.key, generation, digest: desired.digest, entrypoint: path.resolve(desired.release.root, cli.entrypoint) })
      this.shimGeneration = generation
      this.shimHash = this.hash
      this.shimError = undefined
    } catch (err) {
      this.shimError = this.log.redactor.redactString((err as Error).message)
      this.log.error('shim publish failed', { connector: this.key, generation, error: this.shimError })
    }
  }

  /** Build a complete new generation, commit it, then retire the old connection. */
  private async build(reason: string): Promise<boolean> {
    const desired = this.desired
    if (!desired || this.disposed) return false
    const mcp = desired.release.manifest.mcp
    if (desired.spec && mcp?.activation === 'lazy') return this.buildLazy(desired, reason)
    let conn: UpstreamConnection | undefined
    try {
      // a connector without an MCP server still gets a (tool-less) generation: its shim is published with it
      if (desired.spec) {
        this.connecting = new AbortController()
        try {
          conn = await UpstreamConnection.open(desired.spec, this.connecting.signal)
        } finally {
          this.connecting = undefined
        }
      }
      const tools = conn ? await conn.listTools() : []
      if (conn && this.declared) this.checkDeclaration(tools)
      const generation = this.registry.nextGeneration(this.key)
      const route = buildRoute(this.key, generation, conn ?? NO_UPSTREAM, tools)
      for (const d of route.dropped) this.log.warn('tool dropped: invalid x-mcp-header', { connector: this.key, tool: d.name, reason: d.reason })
      if (this.disposed || this.desired !== desired) {
        await conn?.close(0)
        return false
      }
      this.registry.commit(route)
      const old = this.connection
      this.connection = conn
      if (conn) this.watch(conn)
      void this.retireLazy()
      this.generation = generation
      this.toolCount = route.tools.length
      this.upSince = Date.now()
      this.setStatus('ready')
      this.log.info('route committed', { connector: this.key, generation, tools: route.tools.length, reason, pid: conn?.pid })
      if (old && old !== conn) void old.close().catch(() => {})
      return true
    } catch (err) {
      await conn?.close(0).catch(() => {})
      this.fail(err, reason)
      return false
    }
  }

  /**
   * Lazy activation: the route is committed from the manifest's declared
   * tools and nothing is started; the first tools/call starts the upstream.
   */
  private async buildLazy(desired: DesiredConnector, reason: string): Promise<boolean> {
    const mcp = desired.release.manifest.mcp!
    const idleMs = (mcp.idleTimeoutSeconds ?? 300) * 1000
    const lazy: LazyUpstream = new LazyUpstream(desired.spec!, idleMs, {
      onStarted: async (_conn, tools) => this.onLazyStarted(lazy, tools),
      onStopped: (why) => {
        if (lazy === this.lazy) this.log.info('lazy upstream stopped', { connector: this.key, reason: why })
      },
      onToolsChanged: (conn) => {
        clearTimeout(this.changeTimer)
        this.changeTimer = setTimeout(() => void this.enqueue(() => this.rebuildFromUpstream(conn, lazy)), 50)
      },
    })
    try {
      const generation = this.registry.nextGeneration(this.key)
      const route = buildRoute(this.key, generation, lazy, mcp.tools as UpstreamTool[])
      if (this.disposed || this.desired !== desired) return false
      this.registry.commit(route)
      const oldConnection = this.connection
      this.connection = undefined
      const oldLazy = this.lazy
      this.lazy = lazy
      this.declaredCheck = undefined
      this.generation = generation
      this.toolCount = route.tools.length
      this.setStatus('ready')
      this.log.info('route committed from the declaration; upstream starts on first call', { connector: this.key, generation, tools: route.tools.length, reason })
      void oldConnection?.close().catch(() => {})
      void oldLazy?.dispose().catch(() => {})
      return true
    } catch (err) {
      this.fail(err, reason)
      return false
    }
  }

  /** The first start of a lazy upstream: if it disagrees with the declaration, its truth becomes a new generation. */
  private async onLazyStarted(lazy: LazyUpstream, tools: UpstreamTool[]): Promise<void> {
    if (lazy !== this.lazy || this.disposed) return
    this.log.info('lazy upstream started', { connector: this.key, starts: lazy.starts, pid: lazy.pid })
    if (!this.checkDeclaration(tools).length) return
    const generation = this.registry.nextGeneration(this.key)
    let route
    try {
      route = buildRoute(this.key, generation, lazy, tools)
    } catch (err) {
      // the upstream's own table is unusable: say so, and the call that started it fails with the reason
      this.fail(err, 'lazy start')
      throw err
    }
    this.registry.commit(route)
    this.generation = generation
    this.toolCount = route.tools.length
    this.log.warn('route rebuilt from the upstream tool table', { connector: this.key, generation, tools: route.tools.length })
  }

  /** A failed build: the reason is redacted before it is stored (it may quote an upstream's stderr). */
  private fail(err: unknown, reason: string): void {
    const error = this.log.redactor.redactString((err as Error).message)
    this.lastError = error
    this.setStatus('failed', error)
    this.log.error('route build failed; the previous generation keeps serving', { connector: this.key, reason, error, generation: this.generation })
  }

  /** Compare the manifest's declared tools with the upstream's, remember and log any difference. */
  private checkDeclaration(tools: UpstreamTool[]): ToolDifference[] {
    const differences = compareToolTables(this.declared ?? [], tools)
    this.declaredCheck = { checkedAt: new Date().toISOString(), differences }
    if (differences.length) this.log.warn('declared tools differ from the upstream', { connector: this.key, differences })
    return differences
  }

  private async retireLazy(): Promise<void> {
    const old = this.lazy
    this.lazy = undefined
    await old?.dispose().catch(() => {})
  }

  private watch(conn: UpstreamConnection): void {
    conn.onClosed((why) => {
      if (conn !== this.connection || this.disposed) return
      const error = this.log.redactor.redactString(`upstream ${why}`)
      this.lastError = error
      this.log.warn('upstream exited; restarting with backoff', { connector: this.key, reason: error })
      this.setStatus('starting', `${error}; restarting`)
      // only an upstream that stayed up for a while has earned a quick restart
      if (Date.now() - this.upSince >= STABLE_AFTER_MS) this.failures = 0
      else this.failures++
      this.scheduleRestart()
    })
    conn.onToolsChanged(() => {
      if (conn !== this.connection || this.disposed) return
      // coalesce bursts of list_changed into one rebuild
      clearTimeout(this.changeTimer)
      this.changeTimer = setTimeout(() => void this.enqueue(() => this.rebuildFromUpstream(conn)), 50)
    })
  }

  /** Re-list after the upstream's tools/list_changed; `client` is the route client (the lazy wrapper for lazy connectors). */
  private async rebuildFromUpstream(conn: UpstreamConnection, client: RouteClient = conn): Promise<void> {
    const current = client === conn ? conn === this.connection : client === this.lazy
    if (!current || conn.closed || this.disposed) return
    try {
      const tools = await conn.listTools()
      if (client !== conn) this.checkDeclaration(tools)
      const generation = this.registry.nextGeneration(this.key)
      const route = buildRoute(this.key, generation, client, tools)
      const { changed } = this.registry.commit(route)
      this.generation = generation
      this.toolCount = route.tools.length
      this.log.info('upstream tools changed; route rebuilt', { connector: this.key, generation, tools: route.tools.length, visibleChange: changed })
    } catch (err) {
      this.lastError = this.log.redactor.redactString((err as Error).message)
      this.log.error('rebuild after upstream tools/list_changed failed; the previous generation keeps serving', { connector: this.key, error: this.lastError })
    }
  }

  /** A build failed: count it and try again after the backoff. */
  private retryLater(): void {
    this.failures++
    if (this.failures >= WITHDRAW_AFTER_FAILURES && this.registry.route(this.key)) {
      this.registry.remove(this.key, this.generation)
      this.toolCount = 0
      this.log.error('upstream keeps failing; its tools are withdrawn until a restart succeeds', { connector: this.key, failures: this.failures })
    }
    this.scheduleRestart()
  }

  private scheduleRestart(): void {
    if (this.restartTimer || this.disposed) return
    const delay = backoffDelay(this.failures - 1)
    this.nextRetryAt = new Date(Date.now() + delay).toISOString()
    this.log.info('restart scheduled', { connector: this.key, failures: this.failures, delayMs: delay })
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined
      this.nextRetryAt = undefined
      void this.enqueue(async () => {
        if (this.disposed || (this.connection && !this.connection.closed)) return
        this.restarts++
        if (!(await this.build(`restart (attempt ${this.restarts}, after ${this.failures} failure${this.failures === 1 ? '' : 's'})`))) this.retryLater()
      })
    }, delay)
    this.restartTimer.unref()
  }

  private clearRestart(): void {
    clearTimeout(this.restartTimer)
    this.restartTimer = undefined
    this.nextRetryAt = undefined
  }

  /**
   * The state on disk moved on while a build may still be connecting (an
   * upstream that never answers holds the per-key queue for its whole
   * connect timeout): give that connect up, so the next step runs now.
   */
  supersede(): void {
    this.connecting?.abort()
  }

  /** Not active any more: fence and remove the route, then close the upstream. */
  async deactivate(status: InterfaceStatus, why: string): Promise<void> {
    this.clearRestart()
    clearTimeout(this.changeTimer)
    // a shim may hold a generation no route was committed with (its MCP server never came up)
    const fence = Math.max(this.generation, this.shimGeneration, this.registry.fence(this.key))
    this.registry.remove(this.key, fence)
    this.hash = undefined
    this.desired = undefined
    this.toolCount = 0
    this.setStatus(status, status === 'failed' ? why : undefined)
    if (this.shimGeneration) await this.shims.remove(this.key, this.shimGeneration).catch((err: Error) => this.log.error('shim removal failed', { connector: this.key, error: err.message }))
    await this.retireLazy()
    this.shimGeneration = 0
    this.shimHash = undefined
    const conn = this.connection
    this.connection = undefined
    await conn?.close(5_000).catch(() => {})
    this.log.info('connector deactivated', { connector: this.key, status, reason: why, fence })
  }

  async dispose(): Promise<void> {
    this.disposed = true
    this.clearRestart()
    clearTimeout(this.changeTimer)
    await this.retireLazy()
    const conn = this.connection
    this.connection = undefined
    await conn?.close(1_000).catch(() => {})
  }

  setStatus(status: InterfaceStatus, error?: string): void {
    this.status = status
    this.error = error
    this.lastChange = new Date().toISOString()
    for (const listener of this.statusListeners) listener()
  }

  /** Resolves once the status is anything but `starting` (the outcome of a build or restart). */
  settled(): Promise<void> {
    if (this.status !== 'starting') return Promise.resolve()
    return new Promise((resolve) => {
      const listener = (): void => {
        if (this.status === 'starting' && !this.disposed) return
        this.statusListeners.delete(listener)
        resolve()
      }
      this.statusListeners.add(listener)
    })
  }
}
