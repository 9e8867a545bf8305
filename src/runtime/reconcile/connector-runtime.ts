import type { Logger } from '../log/logger.js'
import { declaredToolsOf, resultCapOf, type EffectiveActivation } from '../manifest/schema.js'
import type { InterfaceStatus } from '../control-protocol/connector-state.js'
import { buildRoute } from '../registry/build-route.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { ToolDifference } from '../registry/declared-tools.js'
import type { RouteClient, UpstreamTable, UpstreamTool } from '../registry/route.js'
import type { UpstreamSpec } from '../upstream/upstream-spec.js'
import {
  openUpstreamConnection,
  UpstreamSupervisor,
  type Activation,
  type SupervisorEvents,
} from '../upstream/upstream-supervisor.js'
import { activationOf, declaredCheckOf, listedReason, WITHDRAW_AFTER_FAILURES } from './activation-plan.js'
import type { ConnectorSnapshot } from './connector-snapshot.js'
import { changeOf, NO_UPSTREAM, specHash, type DesiredConnector } from './desired-connector.js'
import { ConnectorStatus } from './connector-status.js'
import { keepServing, servingNote } from './failed-change.js'
import type { RuntimeDeps } from './runtime-deps.js'
import { runtimeSnapshot } from './runtime-snapshot.js'
import type { ShimKeeper } from './shim-keeper.js'
import { sameTable } from './same-table.js'
import { ServedTable } from './served-table.js'
import { sameToolFilter } from './tool-filter-of.js'
import { DEACTIVATE_DRAIN_MS, SHUTDOWN_DRAIN_MS, UpstreamPair } from './upstream-pair.js'

type Mode = EffectiveActivation
type ListedWhy = Parameters<SupervisorEvents['toolsListed']>[1]

/**
 * One active connector inside the daemon: the route generations built on its upstream. Its one mutation is
 * `commit(tools, client, reason)`, always run through the Reconciler's per-key queue (a lazy upstream's first start
 * included, through its supervisor's events); the upstream's lifecycle is its UpstreamSupervisor's. A new desired
 * state gets a new supervisor beside the serving one, which is retired only once the new one committed.
 */
export class ConnectorRuntime {
  /** What the disk asks for, and its hash. */
  private desired?: { state: DesiredConnector; hash: string }
  /** The serving upstream and the one starting for a new desired state. */
  private readonly upstreams: UpstreamPair
  /** The last committed generation, and the whole table behind it. */
  private readonly served = new ServedTable()
  private readonly state = new ConnectorStatus()
  private declaredCheck?: { checkedAt: string; differences: ToolDifference[] }
  private disposed = false

  private readonly registry: ConnectorMCPRegistry
  private readonly shims: ShimKeeper
  private readonly log: Logger

  constructor(
    readonly key: string,
    private readonly deps: RuntimeDeps,
  ) {
    ;({ registry: this.registry, shims: this.shims, log: this.log } = deps)
    this.upstreams = new UpstreamPair(key, deps.log)
  }

  /** The whole table last committed (before its filter): what a filter's names are checked against. */
  get table(): readonly UpstreamTool[] | undefined {
    // a table without an upstream (no mcp section, a sign-in pending) says nothing of the server's tools
    return this.served.table?.client === NO_UPSTREAM ? undefined : this.served.table?.table.tools
  }

  /** The hash of the desired state being served or started, if any. */
  get hash(): string | undefined {
    return this.desired?.hash
  }

  /** Bring this connector to `desired`; nothing changes when it already serves that, except a missing shim. */
  async apply(desired: DesiredConnector): Promise<void> {
    const hash = specHash(desired)
    if (hash === this.hash && this.state.status === 'ready' && !this.upstreams.pending) return this.refilter(desired)
    this.log.info(changeOf(this.desired?.state, desired), { connector: this.key })
    this.desired = { state: desired, hash }
    this.declaredCheck = undefined
    this.upstreams.dropPending('closing an upstream that was still starting')
    const mcp = desired.release.manifest.mcp
    if (!desired.spec || !mcp) {
      await this.commit({ tools: [] }, NO_UPSTREAM, 'reconcile')
      return
    }
    const { mode, activation } = activationOf(mcp)
    const supervisor = this.supervise(desired.spec, activation, mode)
    this.upstreams.begin(supervisor, desired)
    if (mode === 'lazy') {
      // the route is published from the declaration; the first tools/call starts the upstream
      const why = 'reconcile (declared tools; upstream starts on first call)'
      await this.commit({ tools: declaredToolsOf(mcp) as UpstreamTool[] }, supervisor, why)
      return
    }
    const cached = mode === 'cached' ? await this.deps.cache?.get(this.key, hash) : undefined
    // lazy by cache: the last tools/list publishes the route, the first call starts the upstream;
    // a cached table that no longer builds (a damaged file) is a miss, and the upstream lists again
    if (cached && (await this.commit(cached, supervisor, 'reconcile (cached tools; upstream starts on first call)')))
      return
    this.state.set('starting', 'starting the MCP server')
    try {
      const table = await supervisor.start()
      if (this.upstreams.pending === supervisor) {
        await this.commitListed(this.checkDeclaration(table), supervisor, 'reconcile')
      }
    } catch {
      // the supervisor reported the failure (events.failed) and retries with backoff
    }
    // the CLI depends on the connector being active, not on its MCP server being healthy
    await this.followShim()
  }

  /** The same state but maybe its filter: the table that serves is built again, with no upstream start or list. */
  private async refilter(desired: DesiredConnector): Promise<void> {
    const before = this.desired?.state.filter
    this.desired = { state: desired, hash: this.hash! }
    const table = this.served.table
    if (table && !sameToolFilter(before, desired.filter)) await this.commit(table.table, table.client, 'tool filter')
    else await this.followShim()
  }

  /** The one place the shim is refreshed: for the desired state, with the committed generation (or the next). */
  private async followShim(): Promise<void> {
    if (!this.desired) return
    const { generation } = this.served
    await this.shims.ensure(this.key, this.desired.state, generation, this.registry.nextGeneration(this.key))
  }

  /**
   * The one mutation: a complete table (tools, prompts, resources) for `client`, committed as the next generation
   * (or refused whole, keeping the previous one), served as the connector's filter lets it. The shim follows the
   * commit.
   */
  async commit(table: UpstreamTable, client: RouteClient, reason: string): Promise<boolean> {
    if (!this.desired || this.disposed) return false
    const generation = this.registry.nextGeneration(this.key)
    let route: ReturnType<typeof buildRoute>
    const { filter, release } = this.desired.state
    try {
      // the manifest's cap on one result travels with the route to each call's binding (mcpserver/result-caps.ts)
      route = Object.assign(buildRoute(this.key, generation, client, table, filter), resultCapOf(release.manifest.mcp))
    } catch (err) {
      // fail() logs it with the reason; the previous generation keeps serving
      this.fail(err, reason, client)
      return false
    }
    for (const d of [...route.dropped.map((t) => ({ kind: 'tool', ...t })), ...route.droppedEntries])
      this.log.warn(`${d.kind} not served`, { connector: this.key, ...d })
    const { changed } = this.registry.commit(route)
    // names the filter gives that the table lacks (a tool gone in an upgrade) are shown in status and here
    const unmatched = this.served.committed(route, table, client, filter)
    // a table without an upstream (an OAuth grant that needs the user, an mcp section gone) retires the serving one too
    this.upstreams.promote(client instanceof UpstreamSupervisor ? client : undefined)
    this.state.set('ready')
    const counts = { tools: route.tools.length, hidden: route.hidden?.length, unmatched }
    const fields = { connector: this.key, generation, ...counts, reason, visibleChange: changed }
    this.log.info('route committed', { ...fields, pid: this.upstreams.serving?.pid })
    await this.followShim()
    return true
  }

  /** A table the upstream itself listed: committed, and remembered for the next lazy-by-cache start. */
  private async commitListed(table: UpstreamTable, client: UpstreamSupervisor, reason: string) {
    if (!(await this.commit(table, client, reason))) return
    const hash = this.hash
    if (hash && this.registry.route(this.key)?.client === client) await this.deps.cache?.put(this.key, hash, table)
  }

  private supervise(spec: UpstreamSpec, activation: Activation, mode: EffectiveActivation): UpstreamSupervisor {
    const events: SupervisorEvents = {
      toolsListed: (tools, why) => void this.deps.enqueue(() => this.listed(supervisor, tools, why, mode)),
      failed: (reason, failures, retryAt) => this.upstreamFailed(supervisor, mode, reason, failures, retryAt),
      stopped: (reason) => this.log.info('lazy upstream stopped', { connector: this.key, reason }),
      resourceUpdated: (uri) => this.deps.resourceUpdated?.(uri),
      signInRequired: (reason) => void (this.upstreams.owns(supervisor) && this.needsSignIn(reason)),
    }
    const open = this.deps.openUpstream ?? openUpstreamConnection
    const supervisor: UpstreamSupervisor = new UpstreamSupervisor(spec, activation, events, this.log, open)
    return supervisor
  }

  /** The upstream listed its table (a start, or its own list_changed): committed unless nothing visible changed. */
  private async listed(supervisor: UpstreamSupervisor, listed: UpstreamTable, why: ListedWhy, mode: Mode) {
    if (!this.upstreams.owns(supervisor)) return
    const table = this.checkDeclaration(listed)
    const serving = this.registry.route(this.key)
    // a start that agrees with the table already published (declared or cached) changes nothing anyone can see
    const lazyStart = why === 'started' && mode !== 'eager' && supervisor === this.upstreams.serving
    const published = this.served.table?.table
    if (lazyStart && serving && published && sameTable(published, table, this.key)) return this.state.set('ready')
    const reason = listedReason(why, mode)
    if (mode === 'lazy') await this.commit(table, supervisor, reason)
    else await this.commitListed(table, supervisor, reason)
  }

  private upstreamFailed(supervisor: UpstreamSupervisor, mode: Mode, reason: string, failures: number, at?: string) {
    if (this.upstreams.isChange(supervisor)) return this.changeFailed(reason)
    if (supervisor !== this.upstreams.serving) return
    if (mode === 'eager' && at) this.state.set('starting', `${reason}; restarting`)
    else this.state.set('failed', reason)
    if (failures >= WITHDRAW_AFTER_FAILURES && this.registry.route(this.key)) {
      const why = 'upstream keeps failing; its tools are withdrawn until a restart succeeds'
      this.withdraw(why, false, { failures })
    }
  }

  /** Compare the manifest's declared tools with the upstream's; the upstream's table is the truth either way. */
  private checkDeclaration(table: UpstreamTable): UpstreamTable {
    const check = declaredCheckOf(this.desired?.state.release.manifest.mcp, table.tools)
    if (!check) return table
    this.declaredCheck = check
    if (check.differences.length) {
      this.log.warn('declared tools differ from the upstream', { connector: this.key, differences: check.differences })
    }
    return table
  }

  /** A table that does not build: refused whole; the status says whether a previous generation serves on. */
  private fail(err: unknown, reason: string, client: RouteClient): void {
    const error = this.log.redactor.redactString((err as Error).message)
    const fields = { connector: this.key, reason, error, generation: this.served.generation }
    this.log.error('route build failed; the previous generation keeps serving', fields)
    if (this.upstreams.isChange(client)) return this.changeFailed(error)
    if (!this.registry.route(this.key)) return this.state.set('failed', error)
    this.state.set('ready', `a new tool table was refused (${error}); the previous one serves`)
  }

  /**
   * The desired state's start failed. The serving generation serves on when it uses no value the user replaced
   * (reconcile/failed-change.ts): ready, saying which release serves. Otherwise its tools are withdrawn and its
   * upstream stopped, and the connector is failed.
   */
  private changeFailed(reason: string): void {
    const serving = this.upstreams.servingWanted()
    const change = serving && this.desired ? keepServing(serving, this.desired.state, reason) : undefined
    if (change) return this.state.set('ready', servingNote(change), change)
    if (this.upstreams.serving)
      this.withdraw('a changed credential or setting failed to start: the old upstream stops', true)
    this.state.set('failed', reason)
  }

  /** The server wants an OAuth sign-in: no upstream, no tools, nothing retried until the user signs in. */
  private needsSignIn(reason: string): void {
    this.withdraw('the server asks for an OAuth sign-in: the connector has no upstream until `connect`', true)
    this.upstreams.dropPending('closing for a sign-in')
    this.state.set('needs-auth', reason)
    this.deps.signInFound?.()
  }

  /** No generation serves: the route is fenced away (sessions are told); `stop`: its upstream is closed too. */
  private withdraw(why: string, stop: boolean, fields: Record<string, unknown> = {}): void {
    const { generation } = this.served
    this.registry.remove(this.key, generation)
    this.served.withdrawn()
    const pid = stop ? this.upstreams.serving?.pid : undefined
    this.log.error(why, { connector: this.key, generation, pid, ...fields })
    if (stop) this.upstreams.stopServing()
  }

  /** The state on disk moved on: a connect still in progress for the old desired state is given up. */
  supersede(): void {
    this.upstreams.pending?.abandonConnect()
  }

  /** Not active any more: no snapshot (the registry's listeners see it gone), no route, no shim, no upstreams. */
  async deactivate(status: InterfaceStatus, why: string): Promise<void> {
    const fence = Math.max(this.served.generation, this.shims.generation(this.key), this.registry.fence(this.key))
    this.desired = undefined
    this.registry.remove(this.key, fence)
    this.served.withdrawn()
    this.state.set(status, status === 'failed' ? why : undefined)
    await this.shims.withdraw(this.key)
    await this.upstreams.closeAll(DEACTIVATE_DRAIN_MS)
    this.log.info('connector deactivated', { connector: this.key, status, reason: why, fence })
  }

  async dispose(): Promise<void> {
    this.disposed = true
    await this.upstreams.closeAll(SHUTDOWN_DRAIN_MS)
  }

  get ready(): boolean {
    return this.state.status === 'ready'
  }

  /** Resolves once the status is anything but `starting` (the outcome of a build or restart). */
  settled(): Promise<void> {
    return this.state.settled(() => this.disposed)
  }

  snapshot(): ConnectorSnapshot | undefined {
    if (!this.desired) return undefined
    const { state: desired, hash } = this.desired
    const cli = desired.release.manifest.cli ? this.shims.state(this.key, hash) : undefined
    const { status, reason, failedChange, lastChange } = this.state
    const upstream = this.upstreams.shown(this.ready)
    const { key, declaredCheck, served } = this
    const view = { key, desired, served, status, lastChange, reason, failedChange, upstream }
    return runtimeSnapshot({ ...view, cli, declaredCheck })
  }
}
