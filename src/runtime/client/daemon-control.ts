import { pathToFileURL } from 'node:url'
import { removeDaemonInfoIfOurs } from '../store/daemon-info.js'
import type { StatePaths } from '../paths.js'
import { terminateProven, waitForExit } from '../proc/pid.js'
import type { ResponseOf } from '../control-protocol/message.js'
import type { statusMessage } from '../control-protocol/status.js'
import { ensureDaemon, findDaemon, locateDaemon } from './ensure-daemon.js'

export type DaemonStatus = ({ running: true } & ResponseOf<typeof statusMessage>) | { running: false }

/** `tutti daemon run`: this process becomes the daemon (logs in daemon.log); resolves when it has stopped. */
export async function runDaemonInForeground(
  onListening: (pid: number, port: number) => void,
): Promise<{ pid: number; stopped: true }> {
  // the code a spawned daemon runs (its bundle, see daemon-process.ts), not this CLI's copy of the modules
  const { daemonEntry } = await import('./daemon-process.js')
  const { runDaemon } = (await import(pathToFileURL(daemonEntry()).href)) as typeof import('../daemon/main.js')
  const daemon = await runDaemon()
  onListening(process.pid, daemon.port)
  await daemon.stopped
  return { pid: process.pid, stopped: true }
}

/** `tutti daemon start|stop|status`. */
export class DaemonControl {
  constructor(private readonly paths: StatePaths) {}

  /** Returns once every installed connector has been reconciled (queued behind the start-up reconcile). */
  async start(): Promise<DaemonStatus> {
    const client = await ensureDaemon(this.paths)
    await client.reconcile()
    return { running: true, ...(await client.status()) }
  }

  async status(): Promise<DaemonStatus> {
    const client = await findDaemon(this.paths)
    if (!client) return { running: false }
    return { running: true, ...(await client.status()) }
  }

  /**
   * Polite stop (control request; session tokens outlive it unless
   * `revokeSessions`), then TERM, then KILL — each only for a daemon proven
   * to be this state dir's (daemon-identity.ts); found through the lock's
   * owner when daemon.json is gone or wrong (ensure-daemon.ts). A stale
   * daemon.json is removed, never acted on.
   */
  async stop(options: { revokeSessions?: boolean } = {}): Promise<{ stopped: boolean; pid?: number; stale?: string }> {
    const { info, proof } = await locateDaemon(this.paths)
    if (!info || !proof) return { stopped: false }
    if (!proof.proven && !proof.client) {
      await removeDaemonInfoIfOurs(this.paths, info.pid)
      return { stopped: false, stale: proof.why }
    }
    // the daemon may exit before it answers the stop: waitForExit decides whether it stopped
    await proof.client!.stop(options.revokeSessions ?? false).catch(() => undefined)
    if (!(await waitForExit(info.pid, STOP_GRACE_MS)) && proof.proven)
      await terminateProven(proof.process, STOP_GRACE_MS)
    return { stopped: true, pid: info.pid }
  }
}

/** How long a daemon gets to shut down after the control stop (it closes upstreams first), and after TERM. */
const STOP_GRACE_MS = 5_000
