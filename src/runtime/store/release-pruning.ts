import fs from 'node:fs/promises'
import path from 'node:path'
import { withLock } from '../fs/lock.js'
import type { StatePaths } from '../paths.js'
import { removeTree } from './release-store.js'
import { readInstalled } from './state-files.js'

/*
 * Pruning runs under the state lock and re-reads installed.json there: an install stores its
 * release before it takes the lock to record it, so a prune that trusted the daemon's view could
 * delete a release in the instant between (a full reconcile at daemon start sees the new
 * connector directory as an uninstalled leftover). The record step re-stores a release it finds
 * gone (ConnectorStore.record), so either order ends with the release on disk.
 */

/** Remove every release of `key` except `keep` and the digest installed now; the removed digests. */
export async function pruneReleases(paths: StatePaths, key: string, keep: ReadonlySet<string>): Promise<string[]> {
  return withLock(paths.stateLockTarget, async () => {
    const installed = (await readInstalled(paths)).connectors[key]
    const kept = new Set(keep)
    if (installed) kept.add(installed.digest)
    const dir = paths.releasesDir(key)
    const names = await fs.readdir(dir).catch(() => [] as string[])
    const removed: string[] = []
    // dot entries are a concurrent install's temporary copies
    for (const name of names.filter((n) => !kept.has(n) && !n.startsWith('.'))) {
      await removeTree(path.join(dir, name))
      removed.push(name)
    }
    if (!installed) {
      // rmdir refuses non-empty directories: a data dir with something in it, a concurrent install's copy, stay
      await fs.rmdir(paths.dataDir(key)).catch(() => undefined)
      await fs.rmdir(dir).catch(() => undefined)
      await fs.rmdir(paths.connectorDir(key)).catch(() => undefined)
    }
    return removed
  })
}
