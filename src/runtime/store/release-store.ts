import { createHash, randomBytes } from 'node:crypto'
import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import { ErrorCodes, TuttiError } from '../errors.js'
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
    // synchronous, as the walk: one small file after another (see copyAndDigest)
    if (e.type === 'file') hash.update(fsSync.readFileSync(path.join(root, e.rel)))
    if (e.type === 'symlink') hash.update(e.linkTarget ?? '')
    hash.update('\0')
  }
  return hash.digest('hex')
}

/**
 * The copy and its digest in one pass: each file is read once, its bytes hashed and written to the copy with its
 * final mode (0444, or 0555 if executable). The digest is of the bytes written, so it describes the copy, as
 * digestRelease of the copy would, in the same format. A source file is opened without following a symlink and
 * must still be a regular file: a file swapped for a link since the walk is refused, never copied through.
 * Directories stay writable until the caller makes the tree read-only (readOnlyDirs).
 * Measured on the everything example (4,518 entries): storeRelease took 1.3 to 1.5 CPU-s with copy, digest and
 * chmod as separate asynchronous passes, and takes 0.21 CPU-s so (test/runtime/release-store.test.ts guards the
 * digest's format and the refusals).
 */
export async function copyAndDigest(from: string, to: string, entries: readonly ReleaseEntry[]): Promise<string> {
  const hash = createHash('sha256')
  await fs.mkdir(to, { recursive: true, mode: 0o755 })
  // synchronous calls: thousands of small files (a node_modules) cost the thread pool's round trip each, which
  // took most of the time; the CLI has nothing else to do meanwhile
  for (const e of entries) {
    const dest = path.join(to, e.rel)
    hash.update(`${e.type}\0${e.rel}\0${e.executable ? 'x' : '-'}\0`)
    if (e.type === 'dir') fsSync.mkdirSync(dest, { mode: 0o755 })
    else if (e.type === 'symlink') {
      fsSync.symlinkSync(e.linkTarget!, dest)
      hash.update(e.linkTarget ?? '')
    } else {
      const bytes = readRegularFile(path.join(from, e.rel), e.rel)
      hash.update(bytes)
      fsSync.writeFileSync(dest, bytes, { mode: e.executable ? 0o555 : 0o444, flag: 'wx' })
    }
    hash.update('\0')
  }
  return hash.digest('hex')
}

/** A regular file's bytes, read through a descriptor opened without following a final symlink. */
function readRegularFile(file: string, rel: string): Buffer {
  const changed = (what: string, cause?: unknown) =>
    new TuttiError(ErrorCodes.MANIFEST_INVALID, `${rel} changed while the release was copied: ${what}`, { cause })
  let fd: number
  try {
    fd = fsSync.openSync(file, fsSync.constants.O_RDONLY | fsSync.constants.O_NOFOLLOW)
  } catch (err) {
    // O_NOFOLLOW refuses a symlink with ELOOP; anything else (gone, unreadable) is rethrown as it is
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw changed('it is a symlink now', err)
    throw err
  }
  try {
    if (!fsSync.fstatSync(fd).isFile()) throw changed('it is no longer a regular file')
    return fsSync.readFileSync(fd)
  } finally {
    fsSync.closeSync(fd)
  }
}

/** Directories 0555, deepest first (their files are read-only already): the last step before the rename. */
async function readOnlyDirs(root: string, entries: readonly ReleaseEntry[]): Promise<void> {
  for (const e of [...entries].reverse()) if (e.type === 'dir') await fs.chmod(path.join(root, e.rel), 0o555)
}

export async function copyEntries(from: string, to: string, entries: readonly ReleaseEntry[]): Promise<void> {
  await fs.mkdir(to, { recursive: true, mode: 0o755 })
  for (const e of entries) {
    const dest = path.join(to, e.rel)
    if (e.type === 'dir') fsSync.mkdirSync(dest, { mode: 0o755 })
    else if (e.type === 'symlink') fsSync.symlinkSync(e.linkTarget!, dest)
    else fsSync.copyFileSync(path.join(from, e.rel), dest)
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

/**
 * A release copied and digested into a temporary directory beside the stored ones, read-only already, and what
 * was stored under its digest when it was checked. A prune skips dot entries, so the copy needs no lock; only
 * its commit does.
 */
export interface StagedRelease {
  readonly key: string
  readonly tmp: string
  readonly digest: string
  readonly entries: ReleaseEntry[]
  /** A stored release of the digest, when the copy was made: none, intact, or damaged (to be replaced). */
  readonly found: 'none' | 'intact' | 'damaged'
}

const exists = (dir: string): Promise<boolean> =>
  fs.lstat(dir).then(
    () => true,
    () => false,
  )

/** Whether the release stored at `dir` is whole and still has `digest`. */
const intactAt = (dir: string, digest: string): Promise<boolean> =>
  loadRelease(dir).then(
    async (stored) => (await digestRelease(dir, stored.entries)) === digest,
    () => false,
  )

/**
 * The slow half of storing a release, done before the releases lock is taken: the copy and digest are
 * synchronous over thousands of files, and a lock held through them is not refreshed meanwhile. On a loaded
 * machine that went past the lock's stale period, and a concurrent install took the lock over
 * (LOCK_COMPROMISED in install-sources' concurrent npm installs).
 */
export async function stageRelease(paths: StatePaths, source: LoadedRelease): Promise<StagedRelease> {
  const key = source.manifest.key
  const releasesDir = paths.releasesDir(key)
  await ensurePrivateDir(releasesDir)
  const tmp = path.join(releasesDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  // not recursive: a prune that removed an emptied releases dir since is an error here, never a 0755 parent
  await fs.mkdir(tmp, { mode: 0o755 })
  try {
    const digest = await copyAndDigest(source.root, tmp, source.entries)
    // the copy is validated again (what runs is what was checked), and is the tree the digest was made of
    const copy = await loadRelease(tmp)
    if (!sameTree(copy.entries, source.entries))
      throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${source.root} changed while it was copied`)
    const dir = paths.releaseDir(key, digest)
    // a release already stored under this digest is reused only if it is still intact
    const found = !(await exists(dir)) ? 'none' : (await intactAt(dir, digest)) ? 'intact' : 'damaged'
    await readOnlyDirs(tmp, copy.entries)
    return { key, tmp, digest, entries: copy.entries, found }
  } catch (err) {
    await removeTree(tmp)
    throw err
  }
}

/**
 * The staged copy in place, under the releases lock: a stored release of its digest is kept if it is whole, else
 * the copy is renamed into place. The caller removes `staged.tmp` after the lock.
 */
export async function commitRelease(paths: StatePaths, staged: StagedRelease): Promise<StoredRelease> {
  const { digest } = staged
  const dir = paths.releaseDir(staged.key, digest)
  // the lock is held, so nothing removes or renames a release meanwhile. One there now is the intact one the copy
  // found, or one a concurrent install of the same content renamed into place since (whole: a rename is), which
  // a daemon may already run from; only one found damaged is checked again, and replaced if it still is
  const kept = (await exists(dir)) && (staged.found !== 'damaged' || (await intactAt(dir, digest)))
  if (!kept) {
    // commits hold the lock one at a time: no other rename can land between these two
    await removeTree(dir)
    await fs.rename(staged.tmp, dir)
    await fs.chmod(dir, 0o555)
  }
  // the stored tree is the copy's, renamed whole: its walk stands, the rest is read from where it now lies
  return { digest, dir, release: { ...(await loadRelease(dir, { walk: false })), entries: staged.entries } }
}

/** Copy a validated source release into the store (idempotent per digest), without the releases lock. */
export async function storeRelease(paths: StatePaths, source: LoadedRelease): Promise<StoredRelease> {
  const staged = await stageRelease(paths, source)
  try {
    return await commitRelease(paths, staged)
  } finally {
    // after a rename there is nothing left to remove
    await removeTree(staged.tmp)
  }
}

/** The same entries, in the same order, of the same types and modes. */
function sameTree(a: readonly ReleaseEntry[], b: readonly ReleaseEntry[]): boolean {
  if (a.length !== b.length) return false
  return a.every((e, i) => {
    const o = b[i]!
    return e.rel === o.rel && e.type === o.type && e.executable === o.executable && e.linkTarget === o.linkTarget
  })
}
