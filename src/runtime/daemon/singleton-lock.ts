import fs from 'node:fs/promises'
import { breakLockOfGoneHolder, holdLock, LOCK_STALE_MS, LOCK_UPDATE_MS } from '../fs/lock.js'
import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'

/** Beyond the lock's stale period: time for the lock library to notice it. */
const SINGLETON_WAIT_MARGIN_MS = 2_000
/** How often a starting daemon looks at a lock that may be going stale. */
const SINGLETON_RETRY_MS = 250

/**
 * The daemon's singleton lock, held for its whole life. A holder proven
 * gone by the lock's owner record (a daemon killed with -9) is taken over
 * at once; one that cannot be proven gone (its pid is never signalled: it
 * may be anyone's by now) stops refreshing the lock, so it goes stale: we
 * wait that long, and not longer. Resolves with the release.
 */
export async function takeSingletonLock(
  paths: StatePaths,
  log: Logger,
  compromised: (err: Error) => void,
): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_STALE_MS + SINGLETON_WAIT_MARGIN_MS
  for (;;) {
    try {
      return await holdLock(paths.daemonLockTarget, compromised)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err
      const holder = await breakLockOfGoneHolder(paths.daemonLockTarget)
      if (holder.state === 'broken') log.warn('took over the lock of a daemon that is gone', { pid: holder.holder.pid })
      if (holder.state !== 'held') {
        if (Date.now() <= deadline) continue
        throw err
      }
      // a holder that refreshes the lock is alive: refuse now rather than wait out the stale period
      const refreshedMsAgo =
        // the lock dir may be gone meanwhile: then it counts as refreshed long ago
        Date.now() - ((await fs.stat(`${paths.daemonLockTarget}.lock`).catch(() => undefined))?.mtimeMs ?? 0)
      if (refreshedMsAgo < 2 * LOCK_UPDATE_MS || Date.now() > deadline) {
        log.error('another daemon holds the lock for this state directory', {
          error: err,
          holder: holder.why,
          stateDir: paths.root,
        })
        throw err
      }
      await new Promise((r) => setTimeout(r, SINGLETON_RETRY_MS))
    }
  }
}
