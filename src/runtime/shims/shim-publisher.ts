import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import cmdShim from 'cmd-shim'
import { CONNECTOR_KEY } from '../connector-key.js'
import { SHIM_PREFIX, shimCommand } from '../names.js'
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic-write.js'
import { assertLockHeld, withLock } from '../fs/lock.js'
import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'
import { posixShimSource, shebangCanName } from './posix-shim.js'
import { readShimGeneration } from './shim-on-disk.js'
import { shimTargetPath, shimTargetSource, TARGET_FILE, type ShimPin } from './shim-target.js'

/** The three files of one shim: POSIX, cmd.exe, PowerShell. */
const SHIM_SUFFIXES = ['', '.cmd', '.ps1'] as const

/**
 * The `tutti-connector-<key>` commands in the state bin dir, written under
 * the shim lock: the POSIX one is ours (posix-shim.ts), the Windows ones are
 * cmd-shim's. A shim is staged beside bin/ (so cmd-shim's relative paths are
 * already right) and renamed into place, and it is removed only while it
 * still points at the generation that asks.
 */
export class ShimPublisher {
  constructor(
    private readonly paths: StatePaths,
    private readonly log: Logger,
    /** The node shims run (tests give one whose path a `#!` line cannot name). */
    private readonly node: string = process.execPath,
  ) {}

  /** Publish `pin`'s shim, unless a newer generation's is already in place (then it stays: newest wins). */
  async publish(pin: ShimPin): Promise<void> {
    const target = shimTargetPath(this.paths, pin)
    await ensurePrivateDir(path.dirname(target))
    await writeFileAtomic(target, shimTargetSource(this.paths, pin), 0o700)
    const outcome = await withLock(this.paths.shimLockTarget, async (held) => {
      const onDisk = await this.publishedGeneration(pin.key)
      if (onDisk !== undefined && onDisk > pin.generation) {
        await this.pruneTargets(pin.key, onDisk)
        return onDisk
      }
      await ensurePrivateDir(this.paths.binDir)
      const staging = path.join(this.paths.root, `.shim-staging-${randomBytes(4).toString('hex')}`)
      await ensurePrivateDir(staging)
      try {
        const name = path.basename(this.paths.shimPath(pin.key))
        await cmdShim(target, path.join(staging, name))
        // cmd-shim's POSIX script replaced by one that forks nothing before node (posix-shim.ts)
        const posix = path.join(staging, name)
        if (shebangCanName(this.node)) {
          await fs.rm(posix)
          await fs.symlink(target, posix)
        } else {
          await fs.writeFile(posix, posixShimSource(shimCommand(pin.key), pin.generation, this.node, target))
          await fs.chmod(posix, 0o755)
        }
        assertLockHeld(held, this.paths.shimLockTarget)
        for (const suffix of SHIM_SUFFIXES)
          await fs.rename(path.join(staging, name + suffix), this.paths.shimPath(pin.key) + suffix)
      } finally {
        await fs.rm(staging, { recursive: true, force: true })
      }
      await this.pruneTargets(pin.key, pin.generation)
      return pin.generation
    })
    if (outcome === pin.generation) this.log.info('shim published', { connector: pin.key, generation: pin.generation })
    else
      this.log.info('shim kept: a newer generation is published', {
        connector: pin.key,
        generation: pin.generation,
        published: outcome,
      })
  }

  /** The generation the shim on disk runs, if any. */
  async publishedGeneration(key: string): Promise<number | undefined> {
    return readShimGeneration(this.paths.shimPath(key))
  }

  /** Remove the shim only if it is still `generation`'s (a newer one may have replaced it). */
  async remove(key: string, generation: number): Promise<boolean> {
    const removed = await withLock(this.paths.shimLockTarget, async () => {
      if ((await this.publishedGeneration(key)) !== generation) return false
      for (const suffix of SHIM_SUFFIXES) await fs.rm(this.paths.shimPath(key) + suffix, { force: true })
      return true
    })
    // the launch target stays until uninstall: a copy of the shim kept somewhere still refuses with a clear message
    if (removed) this.log.info('shim removed', { connector: key, generation })
    return removed
  }

  /** Remove whatever shim files exist for `key` (strays no active connector published). */
  async removeAny(key: string): Promise<void> {
    await withLock(this.paths.shimLockTarget, async () => {
      for (const suffix of SHIM_SUFFIXES) await fs.rm(this.paths.shimPath(key) + suffix, { force: true })
    })
  }

  /** An uninstalled connector's launch targets, once no shim on disk runs one: they name a release that is gone. */
  async removeTargets(key: string): Promise<void> {
    const removed = await withLock(this.paths.shimLockTarget, async () => {
      if ((await this.publishedGeneration(key)) !== undefined) return false
      const dir = this.paths.shimTargetsDir(key)
      if (
        !(await fs.stat(dir).then(
          () => true,
          () => false,
        ))
      )
        return false
      await fs.rm(dir, { recursive: true, force: true })
      return true
    })
    if (removed) this.log.info('shim targets removed', { connector: key })
  }

  /**
   * Launch targets older than the previous generation are referenced by no
   * shim; the previous one stays for an invocation that is just starting,
   * and a newer one belongs to a publish about to take the lock. Runs under
   * the shim lock, so two publishes never prune each other's targets.
   */
  private async pruneTargets(key: string, published: number): Promise<void> {
    const dir = this.paths.shimTargetsDir(key)
    // no targets dir: nothing to prune
    const files = (await fs.readdir(dir).catch(() => [] as string[])).flatMap((name) => {
      const m = TARGET_FILE.exec(name)
      return m ? [{ name, generation: Number(m[1]) }] : []
    })
    const previous = Math.max(-1, ...files.map((f) => f.generation).filter((g) => g < published))
    for (const f of files) if (f.generation < previous) await fs.rm(path.join(dir, f.name), { force: true })
  }

  /** Every shim on disk, by connector key (for doctor and tests). */
  async list(): Promise<string[]> {
    // no bin dir yet: no shims
    const names = await fs.readdir(this.paths.binDir).catch(() => [] as string[])
    return names
      .filter((n) => n.startsWith(SHIM_PREFIX) && CONNECTOR_KEY.test(n.slice(SHIM_PREFIX.length)))
      .map((n) => n.slice(SHIM_PREFIX.length))
  }
}
