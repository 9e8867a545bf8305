import fs from 'node:fs/promises'
import path from 'node:path'
import type { LoadedRelease } from '../manifest/load.js'
import { withLock } from '../fs/lock.js'
import type { StatePaths } from '../paths.js'
import { commitRelease, removeTree, stageRelease, type StoredRelease } from './release-store.js'
import { readInstalled } from './state-files.js'

/*
 * A release is stored, then recorded in installed.json; a prune keeps what installed.json names.
 * Both hold the releases lock, so a prune never sees a release stored but not yet recorded: a full
 * reconcile at daemon start took such a connector directory for an uninstalled leftover and
 * deleted the release under the install that was writing it (install-keys, in the full suite).
 */

/**
 * Store `release` and record it with `record`, with no prune in between. The copy is made before the lock is
 * taken (release-store.ts: stageRelease), so the lock is held for the rename and the record only.
 */
export async function storeAndRecord<T>(
  paths: StatePaths,
  release: LoadedRelease,
  record: (stored: StoredRelease) => Promise<T>,
): Promise<T> {
  const staged = await stageRelease(paths, release)
  try {
    return await withLock(paths.releasesLockTarget, async () => record(await commitRelease(paths, staged)))
  } finally {
    // the copy, unless it was renamed into place
    await removeTree(staged.tmp)
  }
}

/** Remove every release of `key` except `keep` and the digest installed now; the removed digests. */
export async function pruneReleases(paths: StatePaths, key: string, keep: ReadonlySet<string>): Promise<string[]> {
  return withLock(paths.releasesLockTarget, async () => {
    // read without the state lock: only storeAndRecord, which holds this lock too, adds a digest
    const installed = (await readInstalled(paths)).connectors[key]
    const kept = new Set(keep)
    if (installed) kept.add(installed.digest)
    const dir = paths.releasesDir(key)
    // no releases dir: nothing to prune
    const names = await fs.readdir(dir).catch(() => [] as string[])
    const removed: string[] = []
    // dot entries are temporary copies of a release being stored
    for (const name of names.filter((n) => !kept.has(n) && !n.startsWith('.'))) {
      await removeTree(path.join(dir, name))
      removed.push(name)
    }
    if (!installed) {
      // rmdir refuses non-empty directories: a data dir with something in it stays
      await fs.rmdir(paths.dataDir(key)).catch(() => undefined)
      // a non-empty directory, or one already gone, stays as it is
      await fs.rmdir(dir).catch(() => undefined)
      // a non-empty directory, or one already gone, stays as it is
      await fs.rmdir(paths.connectorDir(key)).catch(() => undefined)
    }
    return removed
  })
}
