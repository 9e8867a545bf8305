import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import { toNodeHandler } from 'h3/node'
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic-write.js'
import { bestEffort } from '../log/best-effort.js'
import { tightenStatePermissions } from '../fs/state-permissions.js'
import { GroupRecords } from '../proc/group-records.js'
import { processStartTicks } from '../proc/pid.js'
import { recordGroupsIn } from '../proc/process-group.js'
import { ConnectorLogs } from '../log/connector-log.js'
import { createLogger, fileSink, withConnectorLogs, type Logger } from '../log/logger.js'
import { Redactor } from '../log/redactor.js'
import type { StatePaths } from '../paths.js'
import { ConnectorMcpEndpoint, MCP_PATH } from '../mcpserver/mcp-endpoint.js'
import { SkillCatalogue } from '../mcpserver/skill-catalogue.js'
import { serverInstructions } from '../mcpserver/server-instructions.js'
import { publishedUri } from '../registry/resource-uris.js'
import { CONTROL_PROTOCOL_VERSION } from '../control-protocol/version.js'
import { skillRootsOf } from '../reconcile/connector-snapshot.js'
import { Reconciler } from '../reconcile/reconciler.js'
import { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { SessionLifetime } from '../sessions/session-lifetime.js'
import { SessionTokens } from '../sessions/session-tokens.js'
import { removeSessionDirs } from '../sessions/session-dir.js'
import { ShimPublisher } from '../shims/shim-publisher.js'
import { publishTuttiCommand, TUTTI_BIN } from '../shims/tutti-command.js'
import { ConnectorStore } from '../store/connector-store.js'
import { PRODUCT_VERSION } from '../version.js'
import type { DaemonContext } from './context.js'
import { DaemonInfoKeeper } from './daemon-info-keeper.js'
import { SessionBins } from './session-bins.js'
import { takeSingletonLock } from './singleton-lock.js'
import { readPreferredPort, removeDaemonInfoIfOurs, writeDaemonInfo } from '../store/daemon-info.js'
import { createDaemonApp, withNodeFront } from './listener/app.js'
import { listenLoopback, type LoopbackListener } from './listener/listen.js'

/** Connections still open at shutdown (a client that never reads) must not hold the daemon up longer. */
const LISTENER_CLOSE_MS = 3_000
/**
 * An MCP request that reaches a daemon still in its start-up reconcile waits
 * for it (a restarted daemon would otherwise answer "unknown tool" for a
 * route it is about to publish); lazy by cache, that is well under a second.
 */
const MCP_WAITS_FOR_RECONCILE_MS = 5_000

export interface DaemonOptions {
  paths: StatePaths
  /**
   * Stop after this long with no request, no request in flight and no open
   * listen stream (0 = never, the default: agents may be quiet for hours).
   */
  idleTimeoutMs?: number
}

/**
 * The daemon's composition root and lifecycle: singleton lock → listen →
 * daemon.json → reconcile everything; one idempotent shutdown.
 */
export class TuttiDaemon {
  readonly log: Logger
  private readonly store: ConnectorStore
  private readonly registry = new ConnectorMCPRegistry()
  private readonly sessions: SessionTokens
  private readonly lifetime: SessionLifetime
  private readonly reconciler: Reconciler
  private readonly sessionBins: SessionBins
  private readonly endpoint: ConnectorMcpEndpoint
  private readonly startedAt = new Date()
  private readonly controlToken = randomBytes(32).toString('base64url')
  private readonly identity = {
    nonce: randomBytes(16).toString('hex'),
    ...(processStartTicks(process.pid) ? { processStart: processStartTicks(process.pid)! } : {}),
  }
  private listener?: LoopbackListener
  private activeRequests = 0
  private lastActivity = Date.now()
  private idleTimer?: NodeJS.Timeout
  private releaseLock?: () => Promise<void>
  private infoKeeper?: DaemonInfoKeeper
  private stopping?: Promise<void>
  private markReconciled!: () => void
  private isReconciled = false
  /** Settles after the start-up reconcile (requests that arrive earlier wait for it). */
  private readonly reconciled = new Promise<void>((resolve) => {
    this.markReconciled = resolve
  })
  private resolveStopped!: () => void
  /** Resolves when shutdown has finished (for whatever reason it began). */
  readonly stopped = new Promise<void>((resolve) => {
    this.resolveStopped = resolve
  })

  constructor(private readonly options: DaemonOptions) {
    // one redactor for the daemon's log and every connector's: both know each credential and token
    const redactor = new Redactor()
    const connectorLogs = new ConnectorLogs(options.paths, redactor)
    this.log = createLogger(withConnectorLogs(fileSink(options.paths.daemonLog), connectorLogs), redactor, 'daemon')
    this.log.redactor.addSecret(this.controlToken)
    this.store = new ConnectorStore(options.paths)
    this.sessions = new SessionTokens(options.paths.sessionsJson, this.log.child('sessions'))
    this.lifetime = new SessionLifetime(this.sessions, this.log.child('sessions'))
    const shims = new ShimPublisher(options.paths, this.log.child('shims'))
    const { store, registry } = this
    const reconcileLog = this.log.child('reconcile')
    this.reconciler = new Reconciler(store, registry, shims, options.paths, reconcileLog, undefined, connectorLogs)
    // the Skills served over MCP are those of the active connectors, as every reconcile leaves them
    const skills = new SkillCatalogue(this.log.child('skills'))
    const updateSkills = () => skills.update(skillRootsOf(this.reconciler.snapshots()))
    this.reconciler.onReconciled(updateSkills)
    // and at once when a route goes: its Skills' resources go in the same list_changed as its own, not in a second
    // one after the upstream's drain and the release's removal
    registry.onChange(updateSkills)
    const snapshots = () => this.reconciler.snapshots()
    this.sessionBins = new SessionBins(options.paths, this.sessions, snapshots, this.log.child('sessions'))
    // a narrowed session's PATH follows the connectors it sees as they come and go
    this.reconciler.onReconciled(() => this.sessionBins.refresh())
    const instructions = serverInstructions(snapshots, () => registry.list())
    // a caller signed in through tutti's URL elicitation: the grant is on disk, the connector comes back from it
    const afterSignIn = async (key: string) => {
      await this.reconciler.reconcile([key])
      await this.reconciler.settled([key])
    }
    const endpointOptions = { instructions, afterSignIn }
    this.endpoint = new ConnectorMcpEndpoint(registry, this.sessions, this.log.child('mcp'), skills, endpointOptions)
    this.reconciler.onResourceUpdated((key, uri) => {
      const served = publishedUri(key, uri)
      if (served) this.endpoint.resourceUpdated(served)
    })
  }

  get mcpUrl(): string {
    return `http://127.0.0.1:${this.port}${MCP_PATH}`
  }

  get port(): number {
    return this.listener ? Number(new URL(this.listener.url).port) : 0
  }

  async start(): Promise<void> {
    const { paths } = this.options
    await ensurePrivateDir(paths.root)
    this.releaseLock = await takeSingletonLock(paths, this.log, (err) => {
      this.log.error('daemon lock compromised; another daemon took over this state directory', { error: err })
      void this.stop('lock compromised', { revokeSessions: false })
    })
    // a state dir others can read would expose credentials and tokens' hashes: tighten it first
    await tightenStatePermissions(paths, this.log)
    await writeFileAtomic(paths.daemonPid, `${process.pid}\n`)
    // we hold the singleton lock: whatever a predecessor's upstreams left running is nobody's now
    const groups = new GroupRecords(paths.upstreamsDir, this.identity.nonce)
    const reaped = groups.reap()
    if (reaped.length) this.log.warn('reaped upstream processes a previous daemon left running', { pids: reaped })
    recordGroupsIn(groups)
    await this.sessions.load()
    this.sessions.onRevoked((revoked) => removeSessionDirs(paths, revoked))
    // what expired, or lost its owner, while no daemon ran
    await this.lifetime.start()
    if (
      await publishTuttiCommand(paths).catch((err: unknown) =>
        this.log.error('could not write bin/tutti', { error: err }),
      )
    )
      this.log.info('bin/tutti written', { target: TUTTI_BIN })
    const ctx: DaemonContext = {
      paths,
      log: this.log.child('control'),
      store: this.store,
      reconciler: this.reconciler,
      registry: this.registry,
      sessions: this.sessions,
      sessionBins: this.sessionBins,
      startedAt: this.startedAt,
      identity: this.identity,
      port: () => this.port,
      initialReconcile: () => this.reconciled,
      mcpUrl: () => this.mcpUrl,
      skillRoots: () => skillRootsOf(this.reconciler.snapshots()),
      requestStop: (reason, opts) => void this.stop(reason, opts),
    }
    const app = createDaemonApp(ctx, this.controlToken, {
      mount: (a) =>
        a.all(MCP_PATH, async (event) => {
          if (!this.isReconciled)
            await Promise.race([this.reconciled, new Promise((r) => setTimeout(r, MCP_WAITS_FOR_RECONCILE_MS).unref())])
          return this.endpoint.handle(event.req)
        }),
      // until the start-up reconcile is done, the h3 path takes every request (it waits for it)
      front: (req, res, headers, toH3) => this.isReconciled && this.endpoint.serveNode(req, res, headers, toH3),
      activity: (delta) => {
        this.activeRequests += delta
        this.lastActivity = Date.now()
      },
    })
    const preferred = await readPreferredPort(paths)
    // every HTTP limit and timeout: http-surface/http-limits.ts
    this.listener = await listenLoopback(withNodeFront(toNodeHandler(app), app), {
      preferredPort: preferred,
      log: this.log.child('http'),
    })
    // an owner's held-open connection (session exec's daemon watch) ends with it
    this.listener.server.on('connection', (s) => s.once('close', () => this.lifetime.connectionClosed()))
    const info = {
      pid: process.pid,
      port: this.port,
      productVersion: PRODUCT_VERSION,
      protocolVersion: CONTROL_PROTOCOL_VERSION,
      startedAt: this.startedAt.toISOString(),
      controlToken: this.controlToken,
      ...this.identity,
    }
    await writeDaemonInfo(paths, info)
    // CLIs find this daemon only through daemon.json: kept as written for as long as the daemon holds the lock
    if (!this.stopping) {
      this.infoKeeper = new DaemonInfoKeeper(paths, info, this.log.child('daemon-info'))
      this.infoKeeper.start()
    }
    this.log.info('daemon listening', {
      pid: process.pid,
      port: this.port,
      version: PRODUCT_VERSION,
      protocol: CONTROL_PROTOCOL_VERSION,
      stateDir: paths.root,
    })
    const started = Date.now()
    this.watchIdle()
    await this.reconciler.reconcile().then(
      (states) => this.log.info('initial reconcile done', { connectors: states.length, ms: Date.now() - started }),
      (err: unknown) => this.log.error('initial reconcile failed', { error: err }),
    )
    this.isReconciled = true
    this.markReconciled()
  }

  private watchIdle(): void {
    const idleMs = this.options.idleTimeoutMs ?? 0
    if (idleMs <= 0) return
    this.idleTimer = setInterval(
      () => {
        const quiet =
          this.activeRequests <= 0 && this.endpoint.openStreams === 0 && Date.now() - this.lastActivity >= idleMs
        if (quiet) void this.stop(`idle for ${Math.round(idleMs / 1000)} s`, { revokeSessions: false })
      },
      Math.min(idleMs, 60_000),
    )
    this.idleTimer.unref()
  }

  /** One idempotent shutdown for signals, `daemon stop`, idle timeout and lock loss. */
  stop(reason: string, options: { revokeSessions: boolean }): Promise<void> {
    this.stopping ??= this.shutdown(reason, options)
    return this.stopping
  }

  private async shutdown(reason: string, options: { revokeSessions: boolean }): Promise<void> {
    this.log.info('daemon stopping', { reason, revokeSessions: options.revokeSessions })
    clearInterval(this.idleTimer)
    this.lifetime.stop()
    await this.infoKeeper?.stop()
    const { paths } = this.options
    // end listen streams gracefully first (their final result), or closing the listener would wait on them
    await this.endpoint.close()
    // shutdown must finish: a failed write leaves sessions.json as it was, for the next daemon
    if (options.revokeSessions) await this.sessions.revoke({ all: true }).catch(() => 0)
    await Promise.race([
      bestEffort(this.listener?.close() ?? Promise.resolve(), this.log, 'closing the listener'),
      new Promise((r) => setTimeout(r, LISTENER_CLOSE_MS).unref()),
    ])
    await this.reconciler.closeAll()
    await removeDaemonInfoIfOurs(paths, process.pid)
    // no daemon.pid, or unreadable: not ours to remove
    if ((await fs.readFile(paths.daemonPid, 'utf8').catch(() => '')).trim() === String(process.pid))
      await fs.rm(paths.daemonPid, { force: true })
    if (this.releaseLock) await bestEffort(this.releaseLock(), this.log, 'releasing the singleton lock')
    this.log.info('daemon stopped', { reason })
    this.resolveStopped()
  }
}
