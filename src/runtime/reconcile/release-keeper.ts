import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'
import { pruneReleases } from '../store/release-pruning.js'

/**
 * Which stored releases of each connector stay: the one that serves and the
 * one before it (a running CLI may still use it). The rest are pruned,
 * under the releases lock (store/release-pruning.ts).
 */
export class ReleaseKeeper {
  private readonly live = new Map<string, string[]>()

  constructor(
    private readonly paths: StatePaths,
    private readonly log: Logger,
  ) {}

  /** `digest` serves `key` now: keep it and the previous one, prune the rest. */
  async serving(key: string, digest: string): Promise<void> {
    const live = this.live.get(key) ?? []
    if (live[0] === digest) return
    const next = [digest, ...live.filter((d) => d !== digest)].slice(0, 2)
    this.live.set(key, next)
    const removed = await pruneReleases(this.paths, key, new Set(next))
    if (removed.length) this.log.info('old releases pruned', { connector: key, removed: removed.length })
  }

  /** Uninstalled: every release goes (and the connector's empty directories). */
  async removeAll(key: string): Promise<void> {
    this.live.delete(key)
    await pruneReleases(this.paths, key, new Set())
  }
}
