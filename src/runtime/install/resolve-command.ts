import fs from 'node:fs/promises'
import path from 'node:path'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { LoadedRelease } from '../manifest/load.js'

/**
 * Where a stdio connector's command comes from, decided at install time:
 * - "node" is tutti's own node (resolved by the daemon, never recorded);
 * - a path with a separator is a file inside the release;
 * - a bare name is looked up in the release's own node_modules/.bin first
 *   (its npm dependencies), then on the installing shell's PATH.
 */
export type LocatedCommand = { kind: 'node' } | { kind: 'release-file'; rel: string } | { kind: 'path'; abs: string }

export const isBareCommand = (command: string): boolean =>
  command !== 'node' && !command.includes('/') && !command.includes('\\')

export async function locateCommand(
  release: LoadedRelease,
  searchPath: string | undefined,
): Promise<LocatedCommand | undefined> {
  const mcp = release.manifest.mcp
  if (mcp?.transport !== 'stdio') return undefined
  if (mcp.command === 'node') return { kind: 'node' }
  if (!isBareCommand(mcp.command)) return { kind: 'release-file', rel: mcp.command }
  const rel = path.posix.join('node_modules', '.bin', mcp.command)
  const local = await fs.access(path.join(release.root, rel), fs.constants.X_OK).then(
    () => true,
    () => false,
  )
  if (local) return { kind: 'release-file', rel }
  const found = await which(mcp.command, { path: searchPath ?? '', nothrow: true })
  if (!found) {
    throw new TuttiError(
      ErrorCodes.COMMAND_NOT_FOUND,
      `mcp.command: command "${mcp.command}" not found: ` +
        `it is not in the release's node_modules/.bin nor on this shell's PATH; ` +
        `install it (or add it to the connector's package.json dependencies) and try again`,
    )
  }
  return { kind: 'path', abs: found }
}

/** The absolute command to record for a release stored at `releaseDir` (undefined: nothing to record). */
export function recordedCommand(located: LocatedCommand | undefined, releaseDir: string): string | undefined {
  if (!located || located.kind === 'node') return undefined
  return located.kind === 'path' ? located.abs : path.join(releaseDir, located.rel)
}
