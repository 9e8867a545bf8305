import fs from 'node:fs/promises'
import path from 'node:path'
import { shimGeneration, TARGET_FILE } from './shim-target.js'

/**
 * The generation a POSIX shim on disk runs: the launch target its symlink
 * names (`…/shims/<key>/g<N>.cjs`), or the one its shell script execs.
 * Undefined for anything else (absent, a stray file, a link elsewhere).
 */
export async function readShimGeneration(shimPath: string): Promise<number | undefined> {
  // not a symlink, or absent: read as a shell script below
  const link = await fs.readlink(shimPath).catch(() => undefined)
  // absent or unreadable: no generation, as the doc comment says
  if (link === undefined) return shimGeneration(await fs.readFile(shimPath, 'utf8').catch(() => ''))
  const match = TARGET_FILE.exec(path.basename(link))
  return match && path.basename(path.dirname(path.dirname(link))) === 'shims' ? Number(match[1]) : undefined
}
