import fs from 'node:fs/promises'
import { readJsonIfExists, writeJsonAtomic } from '../fs/atomic-write.js'
import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'
import type { UpstreamTool } from '../registry/route.js'
import type { UpstreamTable } from '../registry/route.js'

/** An entry of an older daemon has tools alone: its other lists are as good as none. */
interface CacheEntry extends Partial<Omit<UpstreamTable, 'tools'>> {
  /**
   * The desired state the table was listed for: release digest, command, environment, credentials and settings
   * (hashed).
   */
  spec: string
  listedAt: string
  tools: UpstreamTool[]
}

const tableOf = ({ spec: _spec, listedAt: _at, ...table }: CacheEntry): UpstreamTable => table

/**
 * The last tools/list of each connector's upstream, so that a daemon start
 * publishes every stdio connector's route without starting one process
 * ("lazy by cache"). An entry is used only for exactly the desired state it
 * was listed for; anything else (an upgrade, a new credential) is a miss.
 */
export class ToolCache {
  constructor(
    private readonly paths: StatePaths,
    private readonly log: Logger,
  ) {}

  async get(key: string, spec: string): Promise<UpstreamTable | undefined> {
    try {
      const entry = (await readJsonIfExists(this.paths.toolCacheFile(key))) as CacheEntry | undefined
      return entry?.spec === spec && Array.isArray(entry.tools) ? tableOf(entry) : undefined
    } catch (err) {
      this.log.warn('tool cache unreadable; the upstream will be started to list its tools', {
        connector: key,
        error: err,
      })
      return undefined
    }
  }

  /** The last table listed, for whatever desired state: the tool names a filter is checked against while none runs. */
  async last(key: string): Promise<readonly UpstreamTool[] | undefined> {
    // unreadable: no table is known, which the caller says
    const entry = (await readJsonIfExists(this.paths.toolCacheFile(key)).catch(() => undefined)) as
      | CacheEntry
      | undefined
    return Array.isArray(entry?.tools) ? entry.tools : undefined
  }

  async put(key: string, spec: string, table: UpstreamTable): Promise<void> {
    try {
      await writeJsonAtomic(this.paths.toolCacheFile(key), {
        spec,
        listedAt: new Date().toISOString(),
        ...table,
      } satisfies CacheEntry)
    } catch (err) {
      this.log.warn('could not write the tool cache; the next start lists the tools again', {
        connector: key,
        error: err,
      })
    }
  }

  async remove(key: string): Promise<void> {
    await fs.rm(this.paths.toolCacheFile(key), { force: true })
  }
}
