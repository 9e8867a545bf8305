import semver from 'semver'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import { runCommand } from '../proc/run-command.js'

/** npm's last line says why a metadata query failed. */
const NPM_ERROR_LINES = 4

/** What the registry offers of a package: its versions and its dist-tags (`latest`, `next`…). */
export interface NpmVersions {
  versions: string[]
  distTags: Record<string, string>
}

/**
 * One metadata query with the user's own npm (`npm view <name> versions
 * dist-tags`): the registry, auth and proxy they configured, and no
 * tarball. Cheap next to `npm pack`, which also downloads the package.
 */
export async function npmVersions(name: string, env: NodeJS.ProcessEnv): Promise<NpmVersions> {
  const npm = await which('npm', { path: env.PATH ?? '', nothrow: true })
  const noNpm = `npm:${name} needs npm, and npm is not on this shell's PATH`
  if (!npm) throw new TuttiError(ErrorCodes.COMMAND_NOT_FOUND, noNpm)
  const args = ['view', name, 'versions', 'dist-tags', '--json', '--loglevel=error']
  const { code, stdout, stderr } = await runCommand(npm, args, { cwd: env.HOME ?? '/', env, captureStdout: true })
  if (code !== 0) {
    const tail = stderr.trim().split('\n').slice(-NPM_ERROR_LINES).join('\n')
    const missing = /E404|404 Not Found/.test(stderr)
    const what = missing ? 'no such package in the npm registry' : `npm view failed (exit ${code})`
    const code_ = missing ? ErrorCodes.ARGUMENT_INVALID : ErrorCodes.DEPENDENCIES_FAILED
    throw new TuttiError(code_, `npm:${name}: ${what}:\n${tail}`)
  }
  let data: { versions?: unknown; 'dist-tags'?: unknown }
  try {
    data = JSON.parse(stdout) as typeof data
  } catch {
    throw new TuttiError(ErrorCodes.DEPENDENCIES_FAILED, `npm:${name}: npm view did not print JSON`)
  }
  // one version is printed as a string, several as a list
  const listed: unknown[] = Array.isArray(data.versions) ? data.versions : [data.versions]
  const versions = listed.filter((v): v is string => typeof v === 'string')
  const tagged = data['dist-tags']
  const tags = (tagged && typeof tagged === 'object' ? tagged : {}) as Record<string, unknown>
  const named = Object.entries(tags).filter((e): e is [string, string] => typeof e[1] === 'string')
  const distTags = Object.fromEntries(named)
  return { versions, distTags }
}

/**
 * The version npm would pick for `spec` (absent: latest), as npm's
 * pick-manifest does: a dist-tag names it; for a range, `latest` when it
 * satisfies the range, else the highest version that does.
 */
export function pickVersion(found: NpmVersions, spec: string | undefined): string | undefined {
  const wanted = spec === undefined || spec === '' ? 'latest' : spec
  if (found.distTags[wanted]) return found.distTags[wanted]
  if (semver.valid(wanted)) return found.versions.includes(semver.clean(wanted)!) ? semver.clean(wanted)! : undefined
  if (!semver.validRange(wanted)) return undefined
  const latest = found.distTags.latest
  if (latest && semver.satisfies(latest, wanted)) return latest
  return semver.maxSatisfying(found.versions, wanted) ?? undefined
}
