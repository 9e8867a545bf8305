import type { Logger } from '../log/logger.js'
import { shimCommand } from '../names.js'
import type { StatePaths } from '../paths.js'
import type { ConnectorSnapshot } from '../reconcile/connector-snapshot.js'
import { syncSessionBin } from '../sessions/session-bin.js'
import { sessionId } from '../sessions/session-dir.js'
import type { SessionRecord } from '../sessions/session-record.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import type { SessionView } from '../sessions/session-view.js'

/**
 * The PATH directories of narrowed sessions (sessions/session-bin.ts),
 * kept current as connectors come and go: after every reconcile, each one
 * holds the shims its view sees of the connectors that have one now.
 * Bursts of reconciles are coalesced into one pass that runs after them.
 */
export class SessionBins {
  private running?: Promise<void>
  private again = false

  constructor(
    private readonly paths: StatePaths,
    private readonly sessions: SessionTokens,
    private readonly snapshots: () => readonly ConnectorSnapshot[],
    private readonly log: Logger,
  ) {}

  /** The shim commands a view may run now. */
  commands(view: SessionView): string[] {
    return this.snapshots()
      .filter((s) => s.active && s.cli?.status === 'ready' && view.connector(s.key))
      .map((s) => shimCommand(s.key))
  }

  /** The session's bin directory, made current; its path. */
  async sync(record: Pick<SessionRecord, 'workspace' | 'session'>, view: SessionView): Promise<string> {
    const dir = this.paths.sessionBinDir(sessionId(record.workspace, record.session))
    await syncSessionBin(dir, this.paths.binDir, this.commands(view))
    return dir
  }

  /** Every narrowed session's bin, once the current pass (if any) is done. */
  refresh(): void {
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.pass().finally(() => {
      this.running = undefined
      if (this.again) {
        this.again = false
        this.refresh()
      }
    })
  }

  private async pass(): Promise<void> {
    for (const { record, view } of this.sessions.narrowed()) {
      try {
        await this.sync(record, view)
      } catch (err) {
        // the next reconcile tries again; the session keeps the links it had
        this.log.warn('could not update a session bin directory', { session: record.session, error: err })
      }
    }
  }
}
