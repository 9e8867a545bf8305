export { specHash, type DesiredConnector } from './desired-connector.js'
import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'
import { effectiveActivation, type EffectiveActivation } from '../manifest/schema.js'
import type { InterfaceStatus } from '../protocol/connector-state.js'
import { buildRoute } from '../registry/build-route.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { compareToolTables, type ToolDifference } from '../registry/declared-tools.js'
import type { RouteClient, UpstreamTool } from '../registry/route.js'
import type { UpstreamSpec } from '../upstream/upstream-spec.js'
import {
  openUpstreamConnection,
  UpstreamSupervisor,
  type Activation,
  type OpenUpstream,
} from '../upstream/upstream-supervisor.js'
import type { ConnectorSnapshot } from './connector-snapshot.js'
import { changeOf, NO_UPSTREAM, specHash, type DesiredConnector } from './desired-connector.js'
import { ConnectorStatus } from './connector-status.js'
import { keepServing, servingNote, type FailedChange } from './failed-change.js'
import { runtimeSnapshot } from './runtime-snapshot.js'
import type { ShimKeeper } from './shim-keeper.js'
import { sameTable } from './same-table.js'
import type { ToolCache } from './tool-cache.js'

/** Failed restarts after which a dead upstream's tools are withdrawn (retries go on). */
export const WITHDRAW_AFTER_FAILURES = 3
/** A lazy (declared or cached) upstream with no call for this long is stopped, unless the manifest says otherwise. */
export const DEFAULT_IDLE_MS = 10 * 60_000
/** An uninstalled or disconnected connector's calls in flight: finished quickly, the user asked it gone. */
const DEACTIVATE_DRAIN_MS = 5_000
/** The daemon is stopping: calls in flight get a second, then everything closes. */
const SHUTDOWN_DRAIN_MS = 1_000
/** Calls in flight on a replaced upstream (an upgrade) get this long to finish. */
const RETIRE_DRAIN_MS = 30_000

/**
 * One active connector inside the daemon: the route generations built on
 * its upstream. Its one mutation is `commit(tools, client, reason)`, always
 * run through the Reconciler's per-key queue (a lazy upstream's first start
 * included, through its supervisor's events); the upstream's lifecycle is
 * its UpstreamSupervisor's. A new desired state gets a new supervisor beside
 * the serving one, which is retired only once the new one committed.
 */
export class ConnectorRuntime {
  hash?: string
  private desired?: DesiredConnector
  /** The supervisor whose generation serves. */
  private serving?: UpstreamSupervisor
  /** A supervisor for the desired state that has not committed yet (still starting, or retrying). */
  private pending?: UpstreamSupervisor
  private readonly state = new ConnectorStatus()
  /** The desired state each supervisor was made for: what a failed change is compared with. */
  private readonly wantedBy = new WeakMap<UpstreamSupervisor, DesiredConnector>()
  private generation = 0
  private toolCount = 0
  private toolBytes = 0
  private declaredCheck?: { checkedAt: string; differences: ToolDifference[] }
  private disposed = false

  constructor(
    readonly key: string,
    private readonly registry: ConnectorMCPRegistry,
    private readonly shims: ShimKeeper,
    private readonly log: Logger,
    private readonly enqueue: (work: () => Promise<void>) => Promise<void>,
    private readonly openUpstream: OpenUpstream = openUpstreamConnection,
    private readonly cache?: Pick<ToolCache, 'get' | 'put'>,
    /** The server turned out to want an OAuth sign-in the manifest did not mention. */
    private readonly signInFound?: () => void,
  ) {}

  /** Bring this connector to `desired`; nothing changes when it already serves that, except a missing shim. */
  async apply(desired: DesiredConnector): Promise<void> {
    const hash = specHash(desired)
    if (hash === this.hash && this.state.status === 'ready' && !this.pending) {
      return this.shims.ensure(this.key, desired, this.generation, this.registry.nextGeneration(this.key))
    }
    this.log.info(changeOf(this.desired, desired), { connector: this.key })
    this.desired = desired
    this.hash = hash
    this.declaredCheck = undefined
    const previousPending = this.pending
    this.pending = undefined
    if (previousPending)
      void bestEffort(previousPending.dispose(0), this.log, 'closing an upstream that was still starting', {
        connector: this.key,
      })
    const mcp = desired.release.manifest.mcp
    if (!desired.spec || !mcp) {
      await this.commit([], NO_UPSTREAM, 'reconcile')
      return
    }
    const mode = effectiveActivation(mcp)
    const activation: Activation =
      mode === 'eager'
        ? { kind: 'eager' }
        : { kind: 'lazy', idleMs: (mcp.idleTimeoutSeconds ?? DEFAULT_IDLE_MS / 1000) * 1000 }
    const supervisor = this.supervise(desired.spec, activation, mode)
    this.wantedBy.set(supervisor, desired)
    this.pending = supervisor
    if (mode === 'lazy') {
      // the route is published from the declaration; the first tools/call starts the upstream
      await this.commit(
        mcp.tools as UpstreamTool[],
        supervisor,
        'reconcile (declared tools; upstream starts on first call)',
      )
      return
    }
    const cached = mode === 'cached' ? await this.cache?.get(this.key, hash) : undefined
    // lazy by cache: the last tools/list publishes the route, the first call starts the upstream;
    // a cached table that no longer builds (a damaged file) is a miss, and the upstream lists again
    if (cached && (await this.commit(cached, supervisor, 'reconcile (cached tools; upstream starts on first call)')))
      return
    this.setStatus('starting', 'starting the MCP server')
    try {
      const tools = await supervisor.start()
      if (this.pending === supervisor) await this.commitListed(this.checkDeclaration(tools), supervisor, 'reconcile')
    } catch {
      // the supervisor reported the failure (events.failed) and retries with backoff
    }
    // the CLI depends on the connector being active, not on its MCP server being healthy
    await this.shims.ensure(this.key, desired, this.generation, this.registry.nextGeneration(this.key))
  }

  /**
   * The one mutation: a complete tool table for `client`, committed as the
   * next generation (or refused whole, keeping the previous one). The shim
   * follows the commit.
   */
  async commit(tools: readonly UpstreamTool[], client: RouteClient, reason: string): Promise<boolean> {
    const desired = this.desired
    if (!desired || this.disposed) return false
    const generation = this.registry.nextGeneration(this.key)
    let route: ReturnType<typeof buildRoute>
    try {
      route = buildRoute(this.key, generation, client, tools)
    } catch (err) {
      this.fail(err, reason, client)
      return false
    }
    for (const d of route.dropped)
      this.log.warn('tool dropped: invalid x-mcp-header', { connector: this.key, tool: d.name, reason: d.reason })
    const { changed } = this.registry.commit(route)
    this.generation = generation
    this.toolCount = route.tools.length
    this.toolBytes = route.tools.reduce((n, t) => n + Buffer.byteLength(t.json), 0)
    // a table without an upstream (an OAuth grant that needs the user, an mcp section gone) retires the serving one too
    const next = client instanceof UpstreamSupervisor ? client : undefined
    if (next !== this.serving) {
      const retired = this.serving
      this.serving = next
      if (next && this.pending === next) this.pending = undefined
      if (retired)
        void bestEffort(
          retired.dispose(next ? RETIRE_DRAIN_MS : DEACTIVATE_DRAIN_MS),
          this.log,
          'retiring the previous upstream',
          { connector: this.key },
        )
    }
    this.setStatus('ready')
    this.log.info('route committed', {
      connector: this.key,
      generation,
      tools: route.tools.length,
      reason,
      visibleChange: changed,
      pid: this.serving?.pid,
    })
    await this.shims.ensure(this.key, desired, generation)
    return true
  }

  /** A table the upstream itself listed: committed, and remembered for the next lazy-by-cache start. */
  private async commitListed(
    tools: readonly UpstreamTool[],
    client: UpstreamSupervisor,
    reason: string,
  ): Promise<void> {
    if (!(await this.commit(tools, client, reason))) return
    if (this.hash && this.registry.route(this.key)?.client === client) await this.cache?.put(this.key, this.hash, tools)
  }

  private supervise(spec: UpstreamSpec, activation: Activation, mode: EffectiveActivation): UpstreamSupervisor {
    const supervisor: UpstreamSupervisor = new UpstreamSupervisor(
      spec,
      activation,
      {
        toolsListed: (tools, why) => {
          void this.enqueue(async () => {
            if (supervisor !== this.serving && supervisor !== this.pending) return
            const table = this.checkDeclaration(tools)
            const serving = this.registry.route(this.key)
            // a start that agrees with the table already published (declared or cached) changes nothing anyone can see
            if (
              why === 'started' &&
              mode !== 'eager' &&
              supervisor === this.serving &&
              serving &&
              sameTable(serving.tools, table, this.key)
            ) {
              this.setStatus('ready')
              return
            }
            const reason =
              why === 'changed'
                ? 'upstream tools changed'
                : mode === 'eager'
                  ? 'restart'
                  : `${mode} start: the upstream's table differs from the published one`
            if (mode === 'lazy') await this.commit(table, supervisor, reason)
            else await this.commitListed(table, supervisor, reason)
          })
        },
        failed: (reason, failures, retryAt) => {
          if (supervisor === this.pending && supervisor !== this.serving) return this.changeFailed(reason)
          if (supervisor !== this.serving) return
          if (mode === 'eager' && retryAt) this.setStatus('starting', `${reason}; restarting`)
          else this.setStatus('failed', reason)
          if (failures >= WITHDRAW_AFTER_FAILURES && this.registry.route(this.key)) {
            this.withdraw('upstream keeps failing; its tools are withdrawn until a restart succeeds', false, {
              failures,
            })
          }
        },
        stopped: (reason) => this.log.info('lazy upstream stopped', { connector: this.key, reason }),
        signInRequired: (reason) => {
          if (supervisor === this.serving || supervisor === this.pending) this.needsSignIn(reason)
        },
      },
      this.log,
      this.openUpstream,
    )
    return supervisor
  }

  /** Compare the manifest's declared tools with the upstream's; the upstream's table is the truth either way. */
  private checkDeclaration(tools: UpstreamTool[]): UpstreamTool[] {
    const declared = this.desired?.release.manifest.mcp?.tools as UpstreamTool[] | undefined
    if (!declared) return tools
    const differences = compareToolTables(declared, tools)
    this.declaredCheck = { checkedAt: new Date().toISOString(), differences }
    if (differences.length)
      this.log.warn('declared tools differ from the upstream', { connector: this.key, differences })
    return tools
  }

  /** A table that does not build: refused whole; the status says whether a previous generation serves on. */
  private fail(err: unknown, reason: string, client: RouteClient): void {
    const error = this.log.redactor.redactString((err as Error).message)
    this.log.error('route build failed; the previous generation keeps serving', {
      connector: this.key,
      reason,
      error,
      generation: this.generation,
    })
    if (client === this.pending && client !== this.serving) return this.changeFailed(error)
    if (!this.registry.route(this.key)) return this.setStatus('failed', error)
    this.setStatus('ready', `a new tool table was refused (${error}); the previous one serves`)
  }

  /**
   * The desired state's start failed. The serving generation serves on when
   * it uses no value the user replaced (reconcile/failed-change.ts): ready,
   * saying which release serves. Otherwise its tools are withdrawn and its
   * upstream stopped, and the connector is failed.
   */
  private changeFailed(reason: string): void {
    const serving = this.serving && this.wantedBy.get(this.serving)
    const change = serving && this.desired ? keepServing(serving, this.desired, reason) : undefined
    if (change) return this.setStatus('ready', servingNote(change), change)
    if (this.serving) this.withdraw('a changed credential or setting failed to start: the old upstream stops', true)
    this.setStatus('failed', reason)
  }

  /** The server wants an OAuth sign-in: no upstream, no tools, nothing retried until the user signs in. */
  private needsSignIn(reason: string): void {
    this.withdraw('the server asks for an OAuth sign-in: the connector has no upstream until `connect`', true)
    const pending = this.pending
    this.pending = undefined
    if (pending) void bestEffort(pending.dispose(0), this.log, 'closing for a sign-in', { connector: this.key })
    this.setStatus('needs-auth', reason)
    this.signInFound?.()
  }

  /** No generation serves: the route is fenced away (sessions are told); `stop`: its upstream is closed too. */
  private withdraw(why: string, stop: boolean, fields: Record<string, unknown> = {}): void {
    const retired = stop ? this.serving : undefined
    this.registry.remove(this.key, this.generation)
    this.toolCount = 0
    this.toolBytes = 0
    this.log.error(why, { connector: this.key, generation: this.generation, pid: retired?.pid, ...fields })
    if (!retired) return
    this.serving = undefined
    const closing = retired.dispose(DEACTIVATE_DRAIN_MS)
    void bestEffort(closing, this.log, 'closing a withdrawn upstream', { connector: this.key })
  }

  /** The state on disk moved on: a connect still in progress for the old desired state is given up. */
  supersede(): void {
    this.pending?.abandonConnect()
  }

  /** Not active any more: fence and remove the route and the shim, then close the upstreams. */
  async deactivate(status: InterfaceStatus, why: string): Promise<void> {
    const fence = Math.max(this.generation, this.shims.generation(this.key), this.registry.fence(this.key))
    this.registry.remove(this.key, fence)
    this.hash = undefined
    this.desired = undefined
    this.toolCount = 0
    this.toolBytes = 0
    this.setStatus(status, status === 'failed' ? why : undefined)
    await this.shims.withdraw(this.key)
    await this.closeUpstreams(DEACTIVATE_DRAIN_MS)
    this.log.info('connector deactivated', { connector: this.key, status, reason: why, fence })
  }

  async dispose(): Promise<void> {
    this.disposed = true
    await this.closeUpstreams(SHUTDOWN_DRAIN_MS)
  }

  private async closeUpstreams(drainMs: number): Promise<void> {
    const all = [this.serving, this.pending].filter((s): s is UpstreamSupervisor => !!s)
    this.serving = undefined
    this.pending = undefined
    await Promise.all(
      all.map((s) => bestEffort(s.dispose(drainMs), this.log, 'closing an upstream', { connector: this.key })),
    )
  }

  private setStatus(status: InterfaceStatus, reason?: string, failedChange?: FailedChange): void {
    this.state.set(status, reason, failedChange)
  }
  get ready(): boolean {
    return this.state.status === 'ready'
  }

  /** Resolves once the status is anything but `starting` (the outcome of a build or restart). */
  settled(): Promise<void> {
    return this.state.settled(() => this.disposed)
  }

  snapshot(): ConnectorSnapshot | undefined {
    const desired = this.desired
    if (!desired) return undefined
    // while a generation serves, its upstream is the one shown; else the one being started
    const upstream = this.ready && this.serving ? this.serving : (this.pending ?? this.serving)
    const cli = desired.release.manifest.cli ? this.shims.state(this.key, this.hash) : undefined
    const { generation, toolCount: tools, toolBytes, declaredCheck } = this
    const { status, reason, failedChange, lastChange } = this.state
    return runtimeSnapshot({
      key: this.key,
      desired,
      generation,
      tools,
      toolBytes,
      status,
      lastChange,
      ...(reason ? { reason } : {}),
      ...(failedChange ? { failedChange } : {}),
      ...(upstream ? { upstream } : {}),
      ...(cli ? { cli } : {}),
      ...(declaredCheck ? { declaredCheck } : {}),
    })
  }
}
