import { SHIM_PREFIX } from '../names.js'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'

/**
 * A state directory made by an older version, copied with `cp -r`, or
 * created under a lax umask may be open to other users (a 0777 root, a 0644
 * credentials.json). At daemon start every directory and file tutti owns
 * loses its group and other bits; the owner's bits stay, so nothing stops
 * working. Left as they are, by design, and only reachable through the
 * now-private directories above them:
 * - release copies (`connectors/<key>/releases/<digest>/`: 0444/0555, their
 *   digest covers content, not modes);
 * - connector data (`connectors/<key>/data/`: the connector's own files;
 *   the folder itself is tightened);
 * - `tmp/` contents (an install may be running);
 * - connector CLI shims (`bin/tutti-connector-*`), which cmd-shim writes
 *   0755: group and other keep read and execute (a shim holds no secret,
 *   the owner must be able to run it, and only the owner can reach bin/),
 *   and lose write.
 * Symlinks are never followed.
 */
export interface PermissionChange {
  /** Relative to the state dir ('.' for the root). */
  path: string
  from: string
  to: string
}

const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0')

export async function tightenStatePermissions(paths: StatePaths, log: Logger): Promise<PermissionChange[]> {
  const changed: PermissionChange[] = []
  const failed: Array<{ path: string; error: string }> = []
  const rel = (p: string): string => path.relative(paths.root, p) || '.'

  const tighten = async (p: string, st: { mode: number }, mask: number): Promise<void> => {
    const mode = st.mode & 0o7777
    if ((mode & mask) === 0) return
    try {
      await fs.chmod(p, mode & ~mask)
      changed.push({ path: rel(p), from: octal(mode), to: octal(mode & ~mask) })
    } catch (err) {
      // not ours (EPERM) or gone: reported, never fatal for the daemon
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') failed.push({ path: rel(p), error: (err as Error).message })
    }
  }

  const visit = async (dir: string, depth: string[]): Promise<void> => {
    let names: string[]
    try {
      names = await fs.readdir(dir)
    } catch (err) {
      // reported in `failed` (a directory gone meanwhile is not a failure)
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        failed.push({ path: rel(dir), error: (err as Error).message })
      return
    }
    for (const name of names) {
      const p = path.join(dir, name)
      // reported in `failed` (an entry gone meanwhile is not a failure)
      const st = await fs.lstat(p).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') failed.push({ path: rel(p), error: err.message })
        return undefined
      })
      if (!st || st.isSymbolicLink()) continue
      const at = [...depth, name]
      if (isReleaseCopy(at)) continue
      if (st.isDirectory()) {
        await tighten(p, st, 0o077)
        if (!isOpaque(at)) await visit(p, at)
      } else if (st.isFile()) {
        await tighten(p, st, isConnectorShim(at) ? 0o022 : 0o077)
      }
    }
  }

  const rootStat = await fs.lstat(paths.root).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err
    return undefined
  })
  if (!rootStat) return changed // a fresh state dir is created private
  await tighten(paths.root, rootStat, 0o077)
  await visit(paths.root, [])
  if (changed.length)
    log.warn('state directory permissions were too open; tightened', { stateDir: paths.root, changed })
  if (failed.length)
    log.warn('state directory permissions could not all be tightened', { stateDir: paths.root, failed })
  return changed
}

/** `bin/tutti-connector-<key>` (+ .cmd, .ps1), written by cmd-shim; `bin/tutti` is tutti's own, 0700. */
function isConnectorShim(at: readonly string[]): boolean {
  return at.length === 2 && at[0] === 'bin' && at[1]!.startsWith(SHIM_PREFIX)
}

/** `connectors/<key>/releases/<digest or temp copy>`: read-only by design, left whole. */
function isReleaseCopy(at: readonly string[]): boolean {
  return at.length === 4 && at[0] === 'connectors' && at[2] === 'releases'
}

/** Directories whose contents are left alone (see above); the directory itself is tightened. */
function isOpaque(at: readonly string[]): boolean {
  return (at.length === 1 && at[0] === 'tmp') || (at.length === 3 && at[0] === 'connectors' && at[2] === 'data')
}
