import { ErrorCodes, TuttiError } from '../errors.js'
import { liveLockHolder, LOCK_STALE_MS } from '../fs/lock.js'
import type { StatePaths } from '../paths.js'
import type { ProcessRecord } from '../proc/pid.js'
import { readDaemonInfo, type DaemonInfo } from '../store/daemon-info.js'
import { proveDaemon, type DaemonProbe } from './daemon-identity.js'

/**
 * How long a CLI waits for the lock's holder to write daemon.json again: it
 * does when told of the damage, else within its audit period
 * (daemon/daemon-info-keeper.ts, 2 s), on a loaded machine later. Beyond the
 * lock's stale period, so a holder that stopped refreshing the lock is
 * given up on (and taken over) before this ends.
 */
const REWRITE_WAIT_MS = LOCK_STALE_MS + 2_000
/** How often daemon.json is read again meanwhile: one small read, and a CLI is waiting. */
const REWRITE_POLL_MS = 15

const sameFile = (a: DaemonInfo, b: DaemonInfo | undefined): boolean =>
  !!b && a.pid === b.pid && a.port === b.port && a.controlToken === b.controlToken && a.nonce === b.nonce

/** Whether daemon.json reaches the holder itself: an older daemon (no nonce) or a hung one (ensure-daemon.ts's). */
function describesHolder(seen: DaemonProbe, owner: ProcessRecord): boolean {
  const proof = seen.proof
  if (seen.info?.pid !== owner.pid || !proof || proof.proven) return false
  return !!proof.busy || (!!proof.client && proof.health?.nonce === undefined)
}

/**
 * When daemon.json proves no daemon (missing, empty, not JSON, naming
 * another process): the daemon that holds this state dir's singleton lock,
 * alive by the lock's owner record (fs/lock.ts). It writes daemon.json
 * again from its own record (daemon-info-keeper.ts); this waits for that,
 * then proves the daemon the file describes as always (daemon-identity.ts)
 * and as the lock's holder. Nothing is signalled. Undefined when no live
 * process holds the lock (a start may go ahead, and its daemon takes the
 * lock), or when daemon.json describes the holder already.
 */
export async function lockOwnersDaemon(paths: StatePaths, seen: DaemonProbe): Promise<DaemonProbe | undefined> {
  let owner = await liveLockHolder(paths.daemonLockTarget)
  if (!owner || describesHolder(seen, owner)) return undefined
  let tried = seen.info
  let why = seen.proof && !seen.proof.proven ? seen.proof.why : 'daemon.json is missing or not well-formed'
  const deadline = Date.now() + REWRITE_WAIT_MS
  for (;;) {
    const info = await readDaemonInfo(paths)
    if (info?.pid === owner.pid && !sameFile(info, tried)) {
      tried = info
      const proof = await proveDaemon(paths, info)
      const ticks = owner.startTicks
      if (proof.proven && (ticks === undefined || proof.process.startTicks === ticks)) return { info, proof }
      why = proof.proven ? `pid ${owner.pid} is not the process the lock's owner record names` : proof.why
    }
    if (Date.now() >= deadline) break
    await new Promise((r) => setTimeout(r, REWRITE_POLL_MS))
    // released (a daemon that stopped), or taken over: nothing holds the lock that this could wait for
    const now = await liveLockHolder(paths.daemonLockTarget)
    if (now?.pid !== owner.pid || now.startTicks !== owner.startTicks) return undefined
    owner = now
  }
  throw new TuttiError(
    ErrorCodes.DAEMON_UNREACHABLE,
    `pid ${owner.pid} holds this state directory's daemon lock, but daemon.json does not describe it (${why}) ` +
      `and it did not write it again within ${REWRITE_WAIT_MS} ms; see daemon.log, or stop that process yourself`,
  )
}
