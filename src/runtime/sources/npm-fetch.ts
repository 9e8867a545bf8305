import path from 'node:path'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import { runCommand } from '../proc/run-command.js'

/** npm's last lines say why a fetch failed. */
const NPM_ERROR_LINES = 8

/**
 * `npm:<name>[@<version|range>]` fetched as a tarball with the user's own
 * npm (its registry, cache, auth and proxy config), without running any of
 * the package's scripts. Returns the tarball's path.
 */
export async function fetchNpmPackage(spec: string, dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(@[^\s]+)?$/i.test(spec))
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `npm:${spec}: not an npm package name with an optional @version or @range`,
    )
  const npm = await which('npm', { path: env.PATH ?? '', nothrow: true })
  if (!npm)
    throw new TuttiError(ErrorCodes.COMMAND_NOT_FOUND, `npm:${spec} needs npm, and npm is not on this shell's PATH`)
  const { code, stdout, stderr } = await runCommand(
    npm,
    ['pack', spec, '--json', '--ignore-scripts', '--pack-destination', dir, '--loglevel=error'],
    { cwd: dir, env, captureStdout: true },
  )
  if (code !== 0) {
    const tail = stderr.trim().split('\n').slice(-NPM_ERROR_LINES).join('\n')
    const missing = /E404|404 Not Found|No matching version|ETARGET/.test(stderr)
    const why = missing ? 'no such package or version in the npm registry' : `npm pack failed (exit ${code})`
    throw new TuttiError(
      missing ? ErrorCodes.ARGUMENT_INVALID : ErrorCodes.DEPENDENCIES_FAILED,
      `npm:${spec}: ${why}:\n${tail}`,
    )
  }
  let filename: unknown
  try {
    filename = (JSON.parse(stdout) as Array<{ filename?: unknown }>)[0]?.filename
  } catch {
    // older npm printed the file name alone
    filename = stdout.trim().split('\n').pop()
  }
  if (typeof filename !== 'string' || !filename)
    throw new TuttiError(ErrorCodes.DEPENDENCIES_FAILED, `npm:${spec}: npm pack did not say which file it wrote`)
  // scoped packages are written as scope-name-version.tgz in the destination
  return path.join(dir, path.basename(filename.replace(/^@/, '').replace(/\//g, '-')))
}
