import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { MANIFEST_FILE } from '../manifest/schema.js'

export const ARCHIVE = /\.(tgz|tar\.gz)$/i

/**
 * Unpack a connector archive (`npm pack` style: the release may sit under
 * one top-level folder such as `package/`) into a private temporary folder.
 * The caller validates it like any directory and removes it afterwards.
 */
export async function unpackArchive(file: string, tmpRoot: string): Promise<{ root: string; cleanup: () => Promise<void> }> {
  await ensurePrivateDir(tmpRoot)
  const dir = path.join(tmpRoot, `unpack-${randomBytes(6).toString('hex')}`)
  await ensurePrivateDir(dir)
  const cleanup = () => fs.rm(dir, { recursive: true, force: true })
  try {
    // GNU and BSD tar both refuse members that would land outside -C; ownership is never restored
    await new Promise<void>((resolve, reject) =>
      execFile('tar', ['-xzf', file, '-C', dir, '--no-same-owner'], { timeout: 60_000, maxBuffer: 1024 * 1024 }, (err, _out, stderr) =>
        err ? reject(new Error(stderr.trim().split('\n')[0] || err.message)) : resolve(),
      ),
    )
    const entries = await fs.readdir(dir, { withFileTypes: true })
    const nested = entries.length === 1 && entries[0]!.isDirectory() && !(await fs.stat(path.join(dir, MANIFEST_FILE)).catch(() => undefined))
    return { root: nested ? path.join(dir, entries[0]!.name) : dir, cleanup }
  } catch (err) {
    await cleanup()
    throw new TuttiError(ErrorCodes.MANIFEST_NOT_FOUND, `${file} could not be unpacked as a .tgz connector archive: ${(err as Error).message}`)
  }
}
