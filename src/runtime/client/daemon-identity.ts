import { ErrorCodes } from '../errors.js'
import type { StatePaths } from '../paths.js'
import { isAlive, processStartTicks, type ProvenProcess } from '../proc/pid.js'
import type { DaemonInfo } from '../store/daemon-info.js'
import type { healthMessage } from '../control-protocol/health.js'
import type { ResponseOf } from '../control-protocol/message.js'
import { DaemonClient } from './daemon-client.js'

export type Health = ResponseOf<typeof healthMessage>

/**
 * Whether daemon.json describes a live daemon of this state dir: the
 * process listening on its port answers health with the file's pid, nonce
 * and this state dir, and (on Linux) the pid's start time is the one it
 * reports. Only a proven daemon is asked to stop or signalled; a stale file
 * pointing at an unrelated process, or at another state dir's daemon, is
 * cleaned up and never acted on.
 */
export type DaemonProof =
  | { proven: true; client: DaemonClient; health: Health; process: ProvenProcess }
  /** `client`: this state dir's daemon answers at that pid, but not provably as the file's (polite requests only). */
  | { proven: false; why: string; client?: DaemonClient; health?: Health; busy?: boolean }

/** What the CLI found of this state dir's daemon: daemon.json (when it is well-formed) and the proof of it. */
export interface DaemonProbe {
  info?: DaemonInfo
  proof?: DaemonProof
}

/** A live daemon may be slow to answer when the machine is loaded: its second chance. */
const BUSY_DAEMON_HEALTH_MS = 10_000

function refused(err: unknown): boolean {
  const cause = (err as { cause?: NodeJS.ErrnoException }).cause
  return cause?.code === 'ECONNREFUSED'
}

/** A daemon that refuses daemon.json's control token: not the file's, and asking again changes nothing. */
const refusedToken = (err: unknown): boolean => (err as { code?: string }).code === ErrorCodes.UNAUTHORIZED

export async function proveDaemon(paths: StatePaths, info: DaemonInfo): Promise<DaemonProof> {
  const client = new DaemonClient(info)
  let health: Health
  try {
    health = await client.health()
  } catch (err) {
    const { pid, port } = info
    const reason = (err as Error).message
    // refused: nothing listens, the file is stale
    if (refused(err) || !isAlive(pid)) return { proven: false, why: `nothing answers on port ${port} (${reason})` }
    if (refusedToken(err)) return { proven: false, why: `port ${port} refuses the control token (${reason})` }
    // no answer in time, or not a health answer, from a live pid (a busy daemon on a loaded machine): ask again
    try {
      health = await client.health(BUSY_DAEMON_HEALTH_MS)
    } catch (again) {
      // a second silence is the answer: reported as busy, not proven
      const why = `pid ${info.pid} does not answer on port ${info.port} (${(again as Error).message})`
      return { proven: false, why, busy: true }
    }
  }
  if (health.pid !== info.pid)
    return { proven: false, why: `port ${info.port} is answered by pid ${health.pid}, not ${info.pid}` }
  if (health.stateDir !== paths.root)
    return { proven: false, why: `pid ${info.pid} serves another state directory (${health.stateDir})` }
  // this state dir's daemon at that pid, but from before nonces: it may be asked to stop, not signalled
  if (info.nonce === undefined || health.nonce === undefined)
    return { proven: false, why: `pid ${info.pid} is an older daemon that cannot prove its identity`, client, health }
  if (health.nonce !== info.nonce)
    return {
      proven: false,
      why: `pid ${info.pid} is a daemon of this state dir, but not the one daemon.json describes`,
      client,
      health,
    }
  const ticks = processStartTicks(info.pid)
  if (ticks !== undefined && health.processStart !== undefined && ticks !== health.processStart) {
    return { proven: false, why: `pid ${info.pid} is not the process that answered (its start time differs)` }
  }
  return {
    proven: true,
    client,
    health,
    process: { pid: info.pid, ...(ticks !== undefined ? { startTicks: ticks } : {}) },
  }
}
