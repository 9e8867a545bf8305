import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'

/**
 * A connector release on disk, walked once in a stable order. The walk
 * refuses symlinks whose real path is outside the release, and bounds size
 * and count, so the copy and the digest are made from exactly what was
 * checked. The same limits bound `.tgz` extraction (unpack-archive.ts).
 */
export interface ReleaseEntry {
  /** POSIX-style path relative to the release root. */
  rel: string
  type: 'file' | 'dir' | 'symlink'
  executable: boolean
  size: number
  /** For symlinks: the link text (relative, inside the release). */
  linkTarget?: string
}

export const RELEASE_LIMITS = { maxFiles: 20_000, maxBytes: 256 * 1024 * 1024, maxDepth: 32 } as const
/** The field of a ReleaseTreeError about the whole tree (its size), not about one file the manifest names. */
export const WHOLE_RELEASE = '(release)'
const SKIP = new Set(['.git'])

export class ReleaseTreeError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message)
  }
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}

/**
 * The walk runs at install time only (the daemon loads installed releases without one), in the CLI, with
 * synchronous calls: a node_modules has thousands of entries, and the thread pool's round trip per call took
 * most of the time (about 1 CPU-s per 4,500 entries, copy included; see store/release-store.ts).
 */
export async function walkRelease(root: string): Promise<ReleaseEntry[]> {
  const realRoot = fsSync.realpathSync.native(root)
  const entries: ReleaseEntry[] = []
  let bytes = 0
  const visit = (dirRel: string, depth: number): void => {
    if (depth > RELEASE_LIMITS.maxDepth)
      throw new ReleaseTreeError(WHOLE_RELEASE, `directory nesting deeper than ${RELEASE_LIMITS.maxDepth} at ${dirRel}`)
    const names = fsSync.readdirSync(path.join(realRoot, dirRel)).sort()
    for (const name of names) {
      if (SKIP.has(name) && dirRel === '') continue
      const rel = dirRel ? `${dirRel}/${name}` : name
      const abs = path.join(realRoot, rel)
      const st = fsSync.lstatSync(abs)
      if (entries.length >= RELEASE_LIMITS.maxFiles)
        throw new ReleaseTreeError(WHOLE_RELEASE, `more than ${RELEASE_LIMITS.maxFiles} files`)
      if (st.isSymbolicLink()) {
        const target = fsSync.readlinkSync(abs)
        checkLink(realRoot, rel, abs, target)
        entries.push({ rel, type: 'symlink', executable: false, size: 0, linkTarget: target })
      } else if (st.isDirectory()) {
        entries.push({ rel, type: 'dir', executable: false, size: 0 })
        visit(rel, depth + 1)
      } else if (st.isFile()) {
        bytes += st.size
        if (bytes > RELEASE_LIMITS.maxBytes)
          throw new ReleaseTreeError(WHOLE_RELEASE, `release larger than ${RELEASE_LIMITS.maxBytes} bytes`)
        entries.push({ rel, type: 'file', executable: (st.mode & 0o111) !== 0, size: st.size })
      } else {
        throw new ReleaseTreeError(rel, `${rel} is not a regular file, directory or symlink`)
      }
    }
  }
  visit('', 0)
  return entries
}

/**
 * A link is copied verbatim, so its text must be relative and stay inside
 * (then it means the same in the copy), and what it really resolves to must
 * be inside too: the text alone lies once another link is on the way
 * (`a -> .` makes `a/a/../x` lexically `a/x`, really `../x`). A link whose
 * target does not exist, or loops, cannot be proven inside and is refused.
 * One realpath per link keeps node_modules/.bin cheap.
 */
function checkLink(realRoot: string, rel: string, abs: string, target: string): void {
  if (path.isAbsolute(target) || !isInside(realRoot, path.resolve(path.dirname(abs), target))) {
    throw new ReleaseTreeError(rel, `symlink ${rel} -> ${target} points outside the release`)
  }
  let real: string
  try {
    // realpath(3), as fs.promises.realpath: node's own realpathSync resolves a `..` after a link lexically
    real = fsSync.realpathSync.native(abs)
  } catch (err) {
    // rethrown below as a ReleaseTreeError that says why
    const code = (err as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT' || code === 'ENOTDIR'
        ? 'is dangling (its target does not exist)'
        : code === 'ELOOP'
          ? 'is a symlink loop'
          : `cannot be resolved (${code ?? (err as Error).message})`
    throw new ReleaseTreeError(
      rel,
      `symlink ${rel} -> ${target} ${why}, so it cannot be proven to stay inside the release`,
    )
  }
  if (!isInside(realRoot, real))
    throw new ReleaseTreeError(rel, `symlink ${rel} -> ${target} resolves outside the release (through other symlinks)`)
}

/**
 * Resolve a manifest-relative path and prove it stays inside the release
 * after following symlinks. Returns the real absolute path.
 */
export async function resolveInside(root: string, rel: string, field: string, want: 'file' | 'dir'): Promise<string> {
  const realRoot = await fs.realpath(root)
  const abs = path.resolve(realRoot, rel)
  if (!isInside(realRoot, abs)) throw new ReleaseTreeError(field, `${field}: "${rel}" escapes the release`)
  let real: string
  try {
    real = await fs.realpath(abs)
  } catch {
    throw new ReleaseTreeError(field, `${field}: "${rel}" does not exist in the release`)
  }
  if (!isInside(realRoot, real))
    throw new ReleaseTreeError(field, `${field}: "${rel}" resolves outside the release (symlink escape)`)
  const st = await fs.stat(real)
  if (want === 'file' && !st.isFile()) throw new ReleaseTreeError(field, `${field}: "${rel}" is not a file`)
  if (want === 'dir' && !st.isDirectory()) throw new ReleaseTreeError(field, `${field}: "${rel}" is not a directory`)
  return real
}
