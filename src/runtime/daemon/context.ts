import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'
import type { SkillRootOf } from '../reconcile/connector-snapshot.js'
import type { Reconciler } from '../reconcile/reconciler.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import type { SessionBins } from './session-bins.js'
import type { ConnectorStore } from '../store/connector-store.js'

/** What control handlers may use. */
export interface DaemonContext {
  readonly paths: StatePaths
  readonly log: Logger
  readonly store: ConnectorStore
  readonly reconciler: Reconciler
  readonly registry: ConnectorMCPRegistry
  readonly sessions: SessionTokens
  /** The PATH directories of narrowed sessions. */
  readonly sessionBins: SessionBins
  readonly startedAt: Date
  /** This daemon's identity as daemon.json states it (see store/daemon-info.ts). */
  readonly identity: { nonce: string; processStart?: string }
  port(): number
  /** Resolves once the start-up reconcile of every installed connector has finished. */
  initialReconcile(): Promise<void>
  /** http://127.0.0.1:<port>/mcp/connector */
  mcpUrl(): string
  /** Skill directories of the active connectors. */
  skillRoots(): SkillRootOf[]
  /** Idempotent shutdown; resolves once it has begun. */
  requestStop(reason: string, options: { revokeSessions: boolean }): void
}
