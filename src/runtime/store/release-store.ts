import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { loadRelease, type LoadedRelease } from '../manifest/load.js'
import type { ReleaseEntry } from '../release/release-tree.js'
import type { StatePaths } from '../paths.js'

/**
 * Content-addressed, read-only copies of connector releases:
 * `connectors/<key>/releases/<sha256>/`. The digest is computed from the copy
 * (not the source), and the copy is validated again, so what runs is exactly
 * what was checked.
 */
export async function digestRelease(root: string, entries: readonly ReleaseEntry[]): Promise<string> {
  const hash = createHash('sha256')
  for (const e of entries) {
    hash.update(`${e.type}\0${e.rel}\0${e.executable ? 'x' : '-'}\0`)
    if (e.type === 'file') hash.update(await fs.readFile(path.join(root, e.rel)))
    if (e.type === 'symlink') hash.update(e.linkTarget ?? '')
    hash.update('\0')
  }
  return hash.digest('hex')
}

export async function copyEntries(from: string, to: string, entries: readonly ReleaseEntry[]): Promise<void> {
  await fs.mkdir(to, { recursive: true, mode: 0o755 })
  for (const e of entries) {
    const dest = path.join(to, e.rel)
    if (e.type === 'dir') await fs.mkdir(dest, { mode: 0o755 })
    else if (e.type === 'symlink') await fs.symlink(e.linkTarget!, dest)
    else await fs.copyFile(path.join(from, e.rel), dest)
  }
}

/** Files 0444 (0555 if executable), directories 0555: a release never changes after install. */
async function makeReadOnly(root: string, entries: readonly ReleaseEntry[]): Promise<void> {
  for (const e of [...entries].reverse()) {
    const p = path.join(root, e.rel)
    if (e.type === 'file') await fs.chmod(p, e.executable ? 0o555 : 0o444)
    else if (e.type === 'dir') await fs.chmod(p, 0o555)
  }
}

export async function removeTree(dir: string): Promise<void> {
  // read-only releases need their write bits back before rm can unlink entries
  const restore = async (p: string): Promise<void> => {
    let st: Awaited<ReturnType<typeof fs.lstat>>
    try {
      st = await fs.lstat(p)
    } catch {
      // gone already: nothing to make writable
      return
    }
    if (!st.isDirectory()) return
    // an entry that cannot be made writable is reported by the rm below, with its path
    await fs.chmod(p, 0o755).catch(() => undefined)
    // unreadable: the rm below reports it with its path
    for (const name of await fs.readdir(p).catch(() => [] as string[])) await restore(path.join(p, name))
  }
  await restore(dir)
  await fs.rm(dir, { recursive: true, force: true })
}

export interface StoredRelease {
  digest: string
  dir: string
  release: LoadedRelease
}

/** Copy a validated source release into the store (idempotent per digest). */
export async function storeRelease(paths: StatePaths, source: LoadedRelease): Promise<StoredRelease> {
  const key = source.manifest.key
  const releasesDir = paths.releasesDir(key)
  await ensurePrivateDir(releasesDir)
  const tmp = path.join(releasesDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  try {
    await copyEntries(source.root, tmp, source.entries)
    const copy = await loadRelease(tmp)
    const digest = await digestRelease(tmp, copy.entries)
    const dir = paths.releaseDir(key, digest)
    // a release already stored under this digest is reused only if it is still intact
    const intact = await loadRelease(dir).then(
      async (stored) => (await digestRelease(dir, stored.entries)) === digest,
      () => false,
    )
    if (intact) {
      await removeTree(tmp)
    } else {
      await removeTree(dir)
      await makeReadOnly(tmp, copy.entries)
      try {
        await fs.rename(tmp, dir)
      } catch (err) {
        // a concurrent install of the same content won the rename
        if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (err as NodeJS.ErrnoException).code !== 'EEXIST')
          throw err
        await removeTree(tmp)
      }
      await fs.chmod(dir, 0o555)
    }
    return { digest, dir, release: await loadRelease(dir) }
  } catch (err) {
    await removeTree(tmp)
    throw err
  }
}
