import fs from 'node:fs/promises'
import type { ConnectorLogs } from '../log/connector-log.js'
import type { Logger } from '../log/logger.js'
import { CONNECTOR_KEY } from '../connector-key.js'
import { declaredToolsOf } from '../manifest/schema.js'
import { OAuthGrantStore, type OAuthGrant } from '../oauth/grant-store.js'
import type { StatePaths } from '../paths.js'
import type { ConnectorState } from '../control-protocol/connector-state.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { ConnectorStore, ListedConnector } from '../store/connector-store.js'
import type { ShimPublisher } from '../shims/shim-publisher.js'
import { openUpstreamConnection, type OpenUpstream } from '../upstream/upstream-supervisor.js'
import { ConnectorRuntime } from './connector-runtime.js'
import { specHash } from './desired-connector.js'
import { desiredOf, type DesiredContext } from './desired-of.js'
import { overallReason, overallStatus, type ConnectorSnapshot } from './connector-snapshot.js'
import { ReleaseKeeper } from './release-keeper.js'
import { learnStoredSecrets } from './secret-upkeep.js'
import { ShimKeeper } from './shim-keeper.js'
import { SignInOverlay } from './sign-in-overlay.js'
import { toConnectorState } from './snapshot-views.js'
import { ToolCache } from './tool-cache.js'
import { UpstreamEras } from '../upstream/upstream-eras.js'
import { KeyedWorkQueue } from './work-queue.js'

/** Builds that may run at once (each may spawn a process; two cores). */
const BUILD_CONCURRENCY = 4

/**
 * Brings the daemon in line with installed.json and credentials.json
 * (DESIGN §6). A connector is active iff it is installed and its auth is
 * ready. Work is serialized per connector. Every connector the daemon
 * knows has a snapshot: an active one's comes from its runtime, an
 * inactive one's is kept here.
 */
export class Reconciler {
  private readonly runtimes = new Map<string, ConnectorRuntime>()
  /** Installed-but-inactive connectors (needs-auth, unreadable release). */
  private readonly inactive = new Map<string, ConnectorSnapshot>()
  private readonly queue: KeyedWorkQueue
  private readonly shimKeeper: ShimKeeper
  private readonly toolCache: ToolCache
  /** What stdio servers' era probes found out for good (upstream/upstream-eras.ts). */
  private readonly eras: UpstreamEras
  private readonly releases: ReleaseKeeper
  private readonly reconciledListeners = new Set<() => void>()
  private readonly updateListeners = new Set<(key: string, uri: string) => void>()
  private readonly grants: OAuthGrantStore
  private readonly signIn = new SignInOverlay()

  constructor(
    private readonly store: ConnectorStore,
    private readonly registry: ConnectorMCPRegistry,
    private readonly shims: ShimPublisher,
    private readonly paths: StatePaths,
    private readonly log: Logger,
    /** How upstreams are dialed (tests give a fake). */
    private readonly openUpstream: OpenUpstream = openUpstreamConnection,
    /** Each connector's own log (upstream stderr and events); the daemon's logger feeds the events. */
    private readonly connectorLogs?: ConnectorLogs,
  ) {
    this.queue = new KeyedWorkQueue(BUILD_CONCURRENCY, log)
    this.shimKeeper = new ShimKeeper(shims, log.child('shims'))
    this.toolCache = new ToolCache(paths, log)
    this.eras = new UpstreamEras((key) => paths.upstreamEraFile(key))
    this.grants = new OAuthGrantStore(paths)
    this.releases = new ReleaseKeeper(paths, log)
  }

  async reconcile(keys?: readonly string[]): Promise<ConnectorState[]> {
    const listed = await this.store.list()
    const installed = new Map(listed.map((c) => [c.installed.key, c]))
    // a full reconcile also visits leftovers on disk (say, uninstalled while no daemon ran)
    // no connectors dir yet: no leftovers
    const names = keys ? [] : await fs.readdir(this.paths.connectorsDir).catch(() => [] as string[])
    const onDisk = names.filter((name) => CONNECTOR_KEY.test(name))
    const targets = keys
      ? [...new Set(keys)]
      : [...new Set([...installed.keys(), ...this.runtimes.keys(), ...this.inactive.keys(), ...onDisk])]
    const grants = await this.grants.all()
    for (const key of targets) this.supersedeStale(key, installed.get(key), grants[key])
    await Promise.all(
      targets.map((key) =>
        this.queue
          .enqueue(key, () => this.reconcileOne(key, installed.get(key), grants[key]))
          .finally(() => this.reconciled()),
      ),
    )
    if (!keys) await this.removeStrayShims()
    return targets
      .map((k) => this.snapshotOf(k))
      .filter((s): s is ConnectorSnapshot => !!s)
      .map(toConnectorState)
  }

  /** Resolves once none of `keys` is `starting` (a build or restart has an outcome). */
  async settled(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.runtimes.get(key)?.settled()))
  }

  /** A connector's upstream said a resource it was subscribed to changed (the upstream's URI). */
  onResourceUpdated(listener: (key: string, uri: string) => void): void {
    this.updateListeners.add(listener)
  }

  /** Called after each connector's reconcile, before `reconcile` resolves: what is active may have changed. */
  onReconciled(listener: () => void): () => void {
    this.reconciledListeners.add(listener)
    return () => this.reconciledListeners.delete(listener)
  }

  private reconciled(): void {
    for (const listener of this.reconciledListeners) listener()
  }

  /** Every connector the daemon knows, by key. */
  snapshots(): ConnectorSnapshot[] {
    const keys = [...new Set([...this.runtimes.keys(), ...this.inactive.keys()])].sort()
    return keys.map((k) => this.snapshotOf(k)).filter((s): s is ConnectorSnapshot => !!s)
  }

  snapshotOf(key: string): ConnectorSnapshot | undefined {
    return this.signIn.over(key, this.runtimes.get(key)?.snapshot() ?? this.inactive.get(key))
  }

  /**
   * The whole tool table known for `key` (before its filter): the committed one, else its last tools/list, else
   * its manifest's declaration.
   */
  async toolTable(key: string): Promise<{ source: 'served' | 'cache' | 'declared' | 'none'; tools: string[] }> {
    const names = (tools: readonly { name: string }[]) => tools.map((t) => t.name)
    const served = this.runtimes.get(key)?.table
    if (served) return { source: 'served', tools: names(served) }
    const cached = await this.toolCache.last(key)
    if (cached) return { source: 'cache', tools: names(cached) }
    // an unreadable release has no declaration to offer: no table is known
    const declared = await this.store.get(key).then(
      (c) => declaredToolsOf(c.release.manifest.mcp),
      () => undefined,
    )
    return declared ? { source: 'declared', tools: names(declared) } : { source: 'none', tools: [] }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((rt) => rt.dispose()))
  }

  private async reconcileOne(
    key: string,
    entry: ListedConnector | undefined,
    grant: OAuthGrant | undefined,
  ): Promise<void> {
    this.signIn.clear(key)
    if (!entry) {
      // a shim left by a daemon that died before removing it (the launcher refuses to run it anyway)
      const stale = await this.shims.publishedGeneration(key)
      if (stale !== undefined && !this.runtimes.has(key)) await this.shims.remove(key, stale)
      const removedRuntime = this.runtimes.get(key)
      await removedRuntime?.deactivate('failed', 'uninstalled')
      this.runtimes.delete(key)
      this.inactive.delete(key)
      this.signIn.forget(key)
      if (stale !== undefined || removedRuntime) this.log.info('connector removed', { connector: key })
      // no shim names them now: a target left would point at a release that is gone
      await this.shims.removeTargets(key)
      this.connectorLogs?.remove(key)
      // a data directory with something in it stays (uninstall --purge removes it): a reinstall finds it again
      await this.releases.removeAll(key)
      await this.toolCache.remove(key)
      await this.eras.remove(key)
      return
    }
    this.connectorLogs?.track(key)
    learnStoredSecrets(this.log.redactor, entry.credentials, grant)
    const desired = desiredOf(key, entry, grant, this.desiredContext(key))
    if ('needsSignIn' in desired && desired.needsSignIn) this.signIn.need(key, desired.needsSignIn)
    if ('inactive' in desired) {
      await this.deactivate(key, desired.inactive)
      return
    }
    this.inactive.delete(key)
    let rt = this.runtimes.get(key)
    if (!rt) {
      rt = new ConnectorRuntime(key, {
        registry: this.registry,
        shims: this.shimKeeper,
        log: this.log.child('connector'),
        enqueue: (work) => this.queue.enqueue(key, work),
        openUpstream: this.openWithLog(key),
        cache: this.toolCache,
        signInFound: () => this.signInFound(key),
        resourceUpdated: (uri) => {
          for (const listener of this.updateListeners) listener(key, uri)
        },
      })
      this.runtimes.set(key, rt)
    }
    await fs.mkdir(this.paths.dataDir(key), { recursive: true, mode: 0o700 })
    await rt.apply(desired)
    if (rt.ready) await this.releases.serving(key, desired.digest)
  }

  private desiredContext(key: string): DesiredContext {
    return {
      paths: this.paths,
      redactor: this.log.redactor,
      fence: this.registry.fence(key),
      signInFound: this.signIn.wasFound(key),
      signInNeeded: () => this.signInNeeded(key),
    }
  }

  /** Dialing `key`'s upstream, with its stderr going to the connector's log. */
  private openWithLog(key: string): OpenUpstream {
    const logs = this.connectorLogs
    const stderr = logs && ((line: string) => logs.stderr(key, line))
    return (spec, signal) => this.openUpstream(spec, signal, stderr, this.eras)
  }

  /**
   * The daemon's auth provider found the grant unusable (and marked it): the connector loses its upstream until
   * `connect`.
   */
  private signInNeeded(key: string): void {
    this.reconcile([key]).catch((err: Error) =>
      this.log.error('reconcile after an OAuth grant needed the user failed', { connector: key, error: err.message }),
    )
  }

  /** A connector without auth in its manifest met a server that wants an OAuth sign-in: it is one from now on. */
  private signInFound(key: string): void {
    this.signIn.markFound(key)
    this.signInNeeded(key)
  }

  /** A runtime whose build is still connecting is told to give up when the disk no longer wants that build. */
  private supersedeStale(key: string, entry: ListedConnector | undefined, grant: OAuthGrant | undefined): void {
    const rt = this.runtimes.get(key)
    if (!rt?.hash) return
    const desired = entry ? desiredOf(key, entry, grant, this.desiredContext(key)) : undefined
    if (!desired || 'inactive' in desired || specHash(desired) !== rt.hash) rt.supersede()
  }

  private async deactivate(key: string, snapshot: ConnectorSnapshot): Promise<void> {
    const rt = this.runtimes.get(key)
    const status = snapshot.mcp?.status ?? snapshot.cli?.status ?? 'failed'
    if (rt) {
      await rt.deactivate(status, overallReason(snapshot) ?? status)
      this.runtimes.delete(key)
    }
    const previous = this.inactive.get(key)
    const same = previous && overallStatus(previous) === status
    this.inactive.set(key, same ? { ...snapshot, lastChange: previous.lastChange } : snapshot)
    if (!same) this.log.info('connector inactive', { connector: key, status, reason: overallReason(snapshot) })
  }

  /** A full reconcile also removes shims on disk that no active connector published. */
  private async removeStrayShims(): Promise<void> {
    for (const key of await this.shims.list()) {
      if (this.shimKeeper.generation(key)) continue
      await this.queue.enqueue(key, async () => {
        if (this.shimKeeper.generation(key)) return
        const generation = await this.shims.publishedGeneration(key)
        await this.shims.removeAny(key)
        this.log.warn('stray shim removed', { connector: key, generation })
      })
    }
  }
}
