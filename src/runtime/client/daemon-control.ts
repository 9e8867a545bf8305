import { readDaemonInfo } from '../protocol/daemon-info.js'
import type { StatePaths } from '../paths.js'
import { isAlive, runsScript, terminate, waitForExit } from '../proc/pid.js'
import type { ResponseOf } from '../protocol/message.js'
import type { statusMessage } from '../protocol/status.js'
import { DaemonClient } from './daemon-client.js'
import { DAEMON_ENTRY } from './daemon-process.js'
import { ensureDaemon, findDaemon } from './ensure-daemon.js'

export type DaemonStatus = ({ running: true } & ResponseOf<typeof statusMessage>) | { running: false }

/** `tutti daemon run`: this process becomes the daemon (logs in daemon.log); resolves when it has stopped. */
export async function runDaemonInForeground(onListening: (pid: number, port: number) => void): Promise<{ pid: number; stopped: true }> {
  const { runDaemon } = await import('../daemon/main.js')
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
   * Polite stop (control request; the daemon revokes every session token),
   * then TERM, then KILL — also for a daemon of another version.
   */
  async stop(): Promise<{ stopped: boolean; pid?: number }> {
    const info = await readDaemonInfo(this.paths)
    if (!info || !isAlive(info.pid)) return { stopped: false }
    const answered = await new DaemonClient(info).stop(true).then(() => true, () => false)
    // only signal a pid we know is a daemon: it answered, or it runs our entry file
    if (!(await waitForExit(info.pid, 5_000)) && (answered || runsScript(info.pid, DAEMON_ENTRY))) await terminate(info.pid, 3_000)
    return { stopped: true, pid: info.pid }
  }
}
