import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'
import type { Reconciler } from '../reconcile/reconciler.js'
import type { ConnectorStore } from '../store/connector-store.js'

/** What control handlers may use. */
export interface DaemonContext {
  readonly paths: StatePaths
  readonly log: Logger
  readonly store: ConnectorStore
  readonly reconciler: Reconciler
  readonly startedAt: Date
  port(): number
  sessionCount(): number
  /** Idempotent shutdown; resolves once it has begun. */
  requestStop(reason: string, options: { revokeSessions: boolean }): void
}
