import fs from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../log/logger.js'
import { CONNECTOR_KEY } from '../connector-key.js'
import { recordEnvironment } from '../install/recorded-environment.js'
import { missingCredentials, resolveSettings } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import type { ConnectorState } from '../protocol/connector-state.js'
import type { DoctorConnector } from '../protocol/doctor.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { ConnectorStore, ListedConnector } from '../store/connector-store.js'
import type { ShimPublisher } from '../shims/shim-publisher.js'
import { pruneReleases } from '../store/release-store.js'
import { upstreamSpec, type UpstreamRecord } from '../upstream/upstream-spec.js'
import { ConnectorRuntime, specHash, type DesiredConnector } from './connector-runtime.js'

/** Builds that may run at once (each may spawn a process; two cores). */
const BUILD_CONCURRENCY = 4

/**
 * Brings the daemon in line with installed.json and credentials.json
 * (DESIGN §6). A connector is active iff it is installed and its auth is
 * ready. Work is serialized per connector, and at most a few builds run at
 * once across connectors.
 */
export class Reconciler {
  private readonly runtimes = new Map<string, ConnectorRuntime>()
  /** Installed-but-inactive connectors (needs-auth, unreadable release). */
  private readonly inactive = new Map<string, ConnectorState>()
  private readonly queues = new Map<string, Promise<void>>()
  private running = 0
  private readonly waiting: Array<() => void> = []
  /** Release digests per connector that must survive pruning (current and previous). */
  private readonly liveDigests = new Map<string, string[]>()

  constructor(
    private readonly store: ConnectorStore,
    private readonly registry: ConnectorMCPRegistry,
    private readonly shims: ShimPublisher,
    private readonly paths: StatePaths,
    private readonly log: Logger,
  ) {}

  async reconcile(keys?: readonly string[]): Promise<ConnectorState[]> {
    const listed = await this.store.list()
    const installed = new Map(listed.map((c) => [c.installed.key, c]))
    // a full reconcile also visits leftovers on disk (say, uninstalled while no daemon ran)
    const onDisk = keys ? [] : (await fs.readdir(this.paths.connectorsDir).catch(() => [] as string[])).filter((name) => CONNECTOR_KEY.test(name))
    const targets = keys ? [...new Set(keys)] : [...new Set([...installed.keys(), ...this.runtimes.keys(), ...this.inactive.keys(), ...onDisk])]
    for (const key of targets) this.supersedeStale(key, installed.get(key))
    await Promise.all(targets.map((key) => this.enqueue(key, () => this.reconcileOne(key, installed.get(key)))))
    if (!keys) await this.removeStrayShims()
    return targets.map((k) => this.state(k)).filter((s): s is ConnectorState => !!s)
  }

  /** Resolves once none of `keys` is `starting` (a build or restart has an outcome). */
  async settled(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.runtimes.get(key)?.settled()))
  }

  snapshot(): ConnectorState[] {
    const keys = [...new Set([...this.runtimes.keys(), ...this.inactive.keys()])].sort()
    return keys.map((k) => this.state(k)!).filter(Boolean)
  }

  state(key: string): ConnectorState | undefined {
    const rt = this.runtimes.get(key)
    if (!rt) return this.inactive.get(key)
    const state: ConnectorState = {
      key,
      version: rt.desired?.release.manifest.version ?? '',
      status: rt.status,
      generation: rt.generation,
      tools: rt.toolCount,
      activation: rt.desired?.release.manifest.mcp?.activation ?? 'eager',
      upstream: rt.upstreamState,
      lastChange: rt.lastChange,
    }
    if (rt.pid !== undefined) state.pid = rt.pid
    if (rt.lazy) state.starts = rt.lazy.starts
    if (rt.error) state.error = rt.error
    if (rt.status !== 'ready') state.reason = rt.error ?? (rt.status === 'starting' ? 'starting the MCP server' : rt.status)
    if (rt.desired?.spec?.kind === 'stdio') state.command = rt.desired.spec.command
    if (rt.desired?.settings && Object.keys(rt.desired.settings).length) state.settings = rt.desired.settings
    state.restarts = rt.restarts
    if (rt.nextRetryAt) state.nextRetryAt = rt.nextRetryAt
    if (rt.lastError) state.lastError = rt.lastError
    if (rt.desired?.release.manifest.cli) {
      state.cli = rt.shimGeneration ? 'ready' : rt.shimError ? 'failed' : 'starting'
      if (!rt.shimGeneration) state.cliReason = rt.shimError ?? 'publishing the command'
    }
    return state
  }

  /** What the doctor needs to know about every connector the daemon tracks. */
  doctorView(): DoctorConnector[] {
    const out: DoctorConnector[] = []
    for (const [key, rt] of this.runtimes) {
      const m = rt.desired?.release.manifest
      const view: DoctorConnector = {
        key,
        status: rt.status,
        active: true,
        generation: rt.generation,
        hasMcp: !!m?.mcp,
        hasCli: !!m?.cli,
        shimGeneration: rt.shimGeneration,
        upstreamRunning: rt.upstreamState === 'running',
        ...(rt.status !== 'ready' ? { reason: rt.error ?? rt.status } : {}),
        skills: rt.desired?.release.skills.map((s) => s.name) ?? [],
      }
      if (rt.desired) view.digest = rt.desired.digest
      if (m?.mcp) view.activation = m.mcp.activation
      if (m?.skills && rt.desired) view.skillsDir = path.join(rt.desired.release.root, m.skills)
      if (rt.declaredCheck) view.declaredCheck = rt.declaredCheck
      out.push(view)
    }
    for (const [key, st] of this.inactive) {
      out.push({ key, status: st.status, active: false, generation: st.generation, hasMcp: false, hasCli: false, shimGeneration: 0, upstreamRunning: false, skills: [], ...(st.reason ? { reason: st.reason } : {}) })
    }
    return out.sort((a, b) => a.key.localeCompare(b.key))
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((rt) => rt.dispose()))
  }

  private async reconcileOne(key: string, entry: ListedConnector | undefined): Promise<void> {
    if (!entry) {
      // a shim left by a daemon that died before removing it (the launcher refuses to run it anyway)
      const stale = await this.shims.publishedGeneration(key)
      if (stale !== undefined && !this.runtimes.has(key)) await this.shims.remove(key, stale)
      const removedRuntime = this.runtimes.get(key)
      await removedRuntime?.deactivate('failed', 'uninstalled')
      this.runtimes.delete(key)
      this.inactive.delete(key)
      this.liveDigests.delete(key)
      // the data directory stays (uninstall --purge removes it): a reinstall finds it again
      await pruneReleases(this.paths, key, new Set())
      if (stale !== undefined || removedRuntime) this.log.info('connector removed', { connector: key })
      return
    }
    // every stored credential is a known secret, also of a connector that is not active yet
    for (const value of Object.values(entry.credentials)) this.log.redactor.addSecret(value)
    const desired = this.desiredOf(key, entry)
    if ('inactive' in desired) {
      await this.deactivate(key, desired.inactive)
      return
    }
    this.inactive.delete(key)
    let rt = this.runtimes.get(key)
    if (!rt) {
      rt = new ConnectorRuntime(key, this.registry, this.shims, this.log.child('connector'), (work) => this.enqueue(key, work))
      this.runtimes.set(key, rt)
    }
    await fs.mkdir(this.paths.dataDir(key), { recursive: true, mode: 0o700 })
    await rt.apply(desired)
    if (rt.status === 'ready') await this.keepDigest(key, desired.digest)
  }

  /** What the state on disk asks of one installed connector: a desired runtime, or why it is inactive. */
  private desiredOf(key: string, entry: ListedConnector): DesiredConnector | { inactive: ConnectorState } {
    const { version, digest } = entry.installed
    const generation = this.registry.fence(key)
    if (!entry.release) {
      return { inactive: { key, version, status: 'failed', generation, tools: 0, error: entry.loadError, reason: `the installed release cannot be read (reinstall it): ${entry.loadError}` } }
    }
    const missing = missingCredentials(entry.release.manifest, entry.credentials)
    if (missing.length) {
      return { inactive: { key, version, status: 'needs-auth', generation, tools: 0, reason: `not connected: missing ${missing.join(', ')} (tutti connector connect ${key} --env ${missing[0]}=…)` } }
    }
    const dataDir = this.paths.dataDir(key)
    const { command, environment, settings } = entry.installed
    // installs recorded before the environment was: the daemon's own, as it used to be
    const record: UpstreamRecord = { environment: environment ?? recordEnvironment(process.env) }
    if (command) record.command = command
    if (settings) record.settings = settings
    return { release: entry.release, digest, spec: upstreamSpec(entry.release, record, entry.credentials, dataDir), settings: resolveSettings(entry.release.manifest, settings, dataDir) }
  }

  /** A runtime whose build is still connecting is told to give up when the disk no longer wants that build. */
  private supersedeStale(key: string, entry: ListedConnector | undefined): void {
    const rt = this.runtimes.get(key)
    if (!rt?.hash) return
    const desired = entry ? this.desiredOf(key, entry) : undefined
    if (!desired || 'inactive' in desired || specHash(desired) !== rt.hash) rt.supersede()
  }

  private async deactivate(key: string, state: ConnectorState): Promise<void> {
    const rt = this.runtimes.get(key)
    if (rt) {
      await rt.deactivate(state.status, state.error ?? state.status)
      this.runtimes.delete(key)
    }
    const previous = this.inactive.get(key)
    this.inactive.set(key, { ...state, lastChange: previous?.status === state.status ? previous.lastChange : new Date().toISOString() })
    if (previous?.status !== state.status) this.log.info('connector inactive', { connector: key, status: state.status, error: state.error })
  }

  /** A full reconcile also removes shims on disk that no active connector published. */
  private async removeStrayShims(): Promise<void> {
    for (const key of await this.shims.list()) {
      const rt = this.runtimes.get(key)
      if (rt?.shimGeneration) continue
      await this.enqueue(key, async () => {
        if (this.runtimes.get(key)?.shimGeneration) return
        const generation = await this.shims.publishedGeneration(key)
        await this.shims.removeAny(key)
        this.log.warn('stray shim removed', { connector: key, generation })
      })
    }
  }

  /** Keep the current and the previous release (a running CLI may still use it); prune the rest. */
  private async keepDigest(key: string, digest: string): Promise<void> {
    const live = this.liveDigests.get(key) ?? []
    if (live[0] === digest) return
    const next = [digest, ...live.filter((d) => d !== digest)].slice(0, 2)
    this.liveDigests.set(key, next)
    const removed = await pruneReleases(this.paths, key, new Set(next))
    if (removed.length) this.log.info('old releases pruned', { connector: key, removed: removed.length })
  }

  /** Run `work` after everything already queued for `key`, within the global build limit. */
  private enqueue(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.queues.get(key) ?? Promise.resolve()
    const run = previous.then(async () => {
      await this.acquire()
      try {
        await work()
      } catch (err) {
        this.log.error('reconcile step failed', { connector: key, error: err })
      } finally {
        this.release()
      }
    })
    this.queues.set(key, run)
    void run.finally(() => {
      if (this.queues.get(key) === run) this.queues.delete(key)
    })
    return run
  }

  private acquire(): Promise<void> {
    if (this.running < BUILD_CONCURRENCY) {
      this.running++
      return Promise.resolve()
    }
    return new Promise((resolve) => this.waiting.push(() => resolve()))
  }

  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}
