import { realpathSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Whether the module at `moduleUrl` is the file node was asked to run. By
 * path, not by URL text: a URL spells a space as %20, and node's main module
 * URL is its real path while argv[1] is the path as typed (a symlinked
 * install).
 */
export function runsAsMain(moduleUrl: string): boolean {
  const main = process.argv[1]
  if (!main) return false
  try {
    return realpathSync(path.resolve(main)) === realpathSync(fileURLToPath(moduleUrl))
  } catch {
    // argv[1] or the module does not resolve (deleted, or a bundle): not the main module
    return false
  }
}
