import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createGunzip } from 'node:zlib'
import { UnpackSync, type ReadEntry } from 'tar'
import { ErrorCodes, TuttiError } from '../errors.js'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { RELEASE_LIMITS } from '../release/release-tree.js'
import { MANIFEST_FILE } from '../manifest/schema.js'

export const ARCHIVE = /\.(tgz|tar\.gz)$/i

/**
 * What an archive may hold: the release limits, so nothing is extracted
 * that the release walk would refuse afterwards. Entries count the one
 * top-level folder of the `npm pack` layout on top; the decompressed stream
 * may add a header, a pax header and padding per entry, no more (so a bomb
 * of padding or of zeros after the end of the archive stops too).
 */
export const ARCHIVE_LIMITS = {
  maxEntries: RELEASE_LIMITS.maxFiles + 1,
  maxBytes: RELEASE_LIMITS.maxBytes,
  maxStreamBytes: RELEASE_LIMITS.maxBytes + (RELEASE_LIMITS.maxFiles + 1) * 4096,
  maxDepth: RELEASE_LIMITS.maxDepth + 2,
} as const

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile'])
const ALLOWED_TYPES = new Set([...FILE_TYPES, 'Directory', 'SymbolicLink', 'Link'])

class ArchiveRejected extends Error {}
const NESTED = { gzip: Buffer.from([0x1f, 0x8b]), zstd: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]) }
const REFUSALS = new Set(['TAR_ENTRY_ERROR', 'TAR_ENTRY_UNSUPPORTED', 'TAR_SYMLINK_ERROR'])

/**
 * Unpack a connector archive (`npm pack` style: the release may sit under
 * one top-level folder such as `package/`) into a private temporary folder.
 * Every entry is checked before it is written and extraction stops at the
 * first one over a limit. The caller validates the result like any
 * directory (symlinks by real path included) and removes it afterwards.
 */
export async function unpackArchive(
  file: string,
  tmpRoot: string,
): Promise<{ root: string; cleanup: () => Promise<void> }> {
  await ensurePrivateDir(tmpRoot)
  const dir = path.join(tmpRoot, `unpack-${randomBytes(6).toString('hex')}`)
  await ensurePrivateDir(dir)
  const cleanup = () => fs.rm(dir, { recursive: true, force: true })
  try {
    await extract(file, dir)
    const entries = await fs.readdir(dir, { withFileTypes: true })
    const nested =
      entries.length === 1 &&
      entries[0]!.isDirectory() &&
      // no manifest at the top: the single directory is the release
      !(await fs.stat(path.join(dir, MANIFEST_FILE)).catch(() => undefined))
    return { root: nested ? path.join(dir, entries[0]!.name) : dir, cleanup }
  } catch (err) {
    await cleanup()
    if (err instanceof ArchiveRejected)
      throw new TuttiError(
        ErrorCodes.MANIFEST_INVALID,
        `${file}: archive rejected, nothing was installed: ${err.message}`,
      )
    throw new TuttiError(
      ErrorCodes.MANIFEST_NOT_FOUND,
      `${file} could not be unpacked as a .tgz connector archive: ${(err as Error).message}`,
    )
  }
}

/**
 * The entry checks, run by the parser before an entry reaches the disk.
 * Throws ArchiveRejected naming the entry.
 */
function entryGuard(): (entry: ReadEntry) => void {
  let entries = 0
  let bytes = 0
  const links = new Set<string>()
  return (entry) => {
    const raw = entry.path
    if (++entries > ARCHIVE_LIMITS.maxEntries)
      throw new ArchiveRejected(`more than ${RELEASE_LIMITS.maxFiles} files (at ${raw})`)
    if (!ALLOWED_TYPES.has(entry.type))
      throw new ArchiveRejected(`${raw}: ${entry.type} entries are not allowed (only files, directories and links)`)
    checkPath(raw, 'path', raw)
    const p = path.posix.normalize(raw).replace(/\/+$/, '')
    const parts = p.split('/')
    if (parts.length > ARCHIVE_LIMITS.maxDepth)
      throw new ArchiveRejected(`${p}: nested deeper than ${RELEASE_LIMITS.maxDepth} directories`)
    // node-tar refuses to write through a symlink too; this says which entry tried
    for (let i = 1; i < parts.length; i++) {
      if (links.has(parts.slice(0, i).join('/')))
        throw new ArchiveRejected(`${p}: extracts through the symlink ${parts.slice(0, i).join('/')}`)
    }
    if (FILE_TYPES.has(entry.type)) {
      bytes += entry.size
      if (bytes > ARCHIVE_LIMITS.maxBytes)
        throw new ArchiveRejected(
          `more than ${RELEASE_LIMITS.maxBytes} bytes of files (the release limit), at ${p} (${entry.size} bytes)`,
        )
    } else if (entry.type === 'SymbolicLink') {
      // relative links may climb (`node_modules/.bin/x -> ../x/cli.js`) but not out; where they
      // really lead is proven on the extracted tree (release-tree.ts), and nothing is written through one
      const target = String(entry.linkpath ?? '')
      checkPath(target, 'symlink target', p, true)
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(p), target))
      if (resolved === '..' || resolved.startsWith('../'))
        throw new ArchiveRejected(`symlink ${p} -> ${target} points outside the release`)
      links.add(p)
    } else if (entry.type === 'Link') {
      // a hard link names its target from the archive root
      const target = String(entry.linkpath ?? '')
      checkPath(target, 'hard link target', p)
      const targetParts = path.posix.normalize(target).split('/')
      if (targetParts.some((_, i) => links.has(targetParts.slice(0, i + 1).join('/'))))
        throw new ArchiveRejected(`hard link ${p} -> ${target} goes through a symlink`)
    }
    if (entry.type !== 'SymbolicLink') links.delete(p) // an entry that replaces a symlink
    // owner bits only (the folder is private); an executable stays executable for its owner
    if (typeof entry.mode === 'number') entry.mode = (entry.mode & 0o700) | ((entry.mode & 0o111) !== 0 ? 0o100 : 0)
  }
}

function checkPath(value: string, what: string, entryPath: string, mayClimb = false): void {
  if (value === '') throw new ArchiveRejected(`${entryPath}: empty ${what}`)
  if (value.startsWith('/') || value.startsWith('\\') || /^[A-Za-z]:/.test(value))
    throw new ArchiveRejected(`${entryPath}: absolute ${what} ${value}`)
  if (!mayClimb && value.split(/[\\/]/).includes('..'))
    throw new ArchiveRejected(`${entryPath}: ${what} ${value} contains ".."`)
}

/**
 * gunzip → count → node-tar (synchronous, so nothing is still being written
 * when a check fails and the caller removes the folder).
 */
function extract(file: string, dir: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const input = createReadStream(file)
    const gunzip = createGunzip()
    const guard = entryGuard()
    let failed = false
    let streamBytes = 0
    const fail = (err: Error): void => {
      if (failed) return
      failed = true
      input.destroy()
      gunzip.destroy()
      reject(err)
    }
    const unpack = new UnpackSync({
      cwd: dir,
      strict: true, // every warning (a bad header, an unsupported entry) is an error, never a silent skip
      preservePaths: false,
      preserveOwner: false,
      zstd: false,
      brotli: false,
      maxDepth: ARCHIVE_LIMITS.maxDepth,
      dmode: 0o700,
      fmode: 0o600,
      filter: (_p, entry) => {
        if (failed) return false
        try {
          guard(entry as ReadEntry)
          return true
        } catch (err) {
          // handed to fail(), which rejects the extraction with it
          fail(err as Error)
          unpack.abort(err as Error)
          return false
        }
      },
    })
    unpack.on('error', (err: Error & { tarCode?: string; entry?: { path?: string } }) => {
      // node-tar's own entry refusals (e.g. a link whose target goes through another link) are hostile content too
      if (err.tarCode && REFUSALS.has(err.tarCode))
        fail(new ArchiveRejected(`${err.entry?.path ?? '(entry)'}: ${err.message.replace(/^TAR_\w+: /, '')}`))
      else fail(err)
    })
    // the first bytes are held until there are enough to see what they are
    let head: Buffer | undefined = Buffer.alloc(0)
    const feed = (chunk: Buffer, last: boolean): void => {
      if (head) {
        head = Buffer.concat([head, chunk])
        if (head.length < 4 && !last) return
        // node-tar would unpack a second layer itself, out of reach of the stream cap
        if (NESTED.gzip.equals(head.subarray(0, 2)) || NESTED.zstd.equals(head.subarray(0, 4)))
          return fail(new ArchiveRejected('a compressed archive inside the .tgz (nested compression is not supported)'))
        chunk = head
        head = undefined
      }
      streamBytes += chunk.length
      if (streamBytes > ARCHIVE_LIMITS.maxStreamBytes)
        return fail(new ArchiveRejected(`decompresses to more than ${ARCHIVE_LIMITS.maxStreamBytes} bytes`))
      unpack.write(chunk)
    }
    gunzip.on('data', (chunk: Buffer) => {
      if (!failed) feed(chunk, false)
    })
    gunzip.on('end', () => {
      if (!failed && head) feed(Buffer.alloc(0), true)
      if (failed) return
      unpack.end()
      if (!failed) resolve()
    })
    gunzip.on('error', (err) => fail(new TuttiError(ErrorCodes.MANIFEST_NOT_FOUND, `not gzip data (${err.message})`)))
    input.on('error', fail)
    input.pipe(gunzip)
  })
}
