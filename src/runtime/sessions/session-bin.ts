import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'

/** `tutti` itself is on every session's PATH: agents run `tutti connector available`. */
export const TUTTI_COMMAND = 'tutti'

/**
 * A narrowed session's PATH directory: one symlink per command it may run,
 * each to that command in the state bin dir (`tutti`, and the shim of each
 * connector with a CLI that its view sees). The state bin dir itself is not
 * on such a session's PATH, so another connector's shim is not a command
 * there. Links that are no longer wanted go, missing ones come; a link is
 * replaced atomically (made aside, renamed over), so a session never finds
 * a command half-made. Each shim checks for itself that its connector is
 * still installed and connected when it runs.
 */
export async function syncSessionBin(dir: string, binDir: string, commands: readonly string[]): Promise<void> {
  await ensurePrivateDir(dir)
  const wanted = new Set([TUTTI_COMMAND, ...commands])
  // a directory that vanished while we looked has nothing to remove
  const present = await fs.readdir(dir).catch(() => [] as string[])
  for (const name of present) if (!wanted.has(name)) await fs.rm(path.join(dir, name), { force: true })
  for (const name of wanted) {
    const link = path.join(dir, name)
    const target = path.join(binDir, name)
    // an unreadable link is made again below
    if ((await fs.readlink(link).catch(() => undefined)) === target) continue
    const aside = `${link}.${process.pid}.tmp`
    await fs.rm(aside, { force: true })
    await fs.symlink(target, aside)
    await fs.rename(aside, link)
  }
}
