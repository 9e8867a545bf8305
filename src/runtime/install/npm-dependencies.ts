import fs from 'node:fs/promises'
import path from 'node:path'
import semver from 'semver'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import { runCommand } from '../proc/run-command.js'
import { nativeBuildEnv } from './install-scripts.js'

/**
 * A release is self-contained: the production dependencies its package.json
 * names are installed into it with the user's own npm (registry, cache and
 * config as they set them) before the digest is taken.
 */
export interface DependencyCheck {
  /** Names of dependencies missing from node_modules or not satisfying their range. */
  missing: string[]
  total: number
  lockfile?: 'package-lock.json' | 'npm-shrinkwrap.json'
}

const LOCKFILES = ['npm-shrinkwrap.json', 'package-lock.json'] as const
/** npm's own stderr is quoted in the error; its last lines say what went wrong. */
const NPM_ERROR_LINES = 12

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  // no package.json: nothing declared; a broken one is refused below
  const text = await fs.readFile(file, 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined
  } catch {
    throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${path.basename(file)}: not valid JSON`)
  }
}

/** Which of the release's dependencies node_modules does not already satisfy. */
export async function checkDependencies(root: string): Promise<DependencyCheck> {
  const pkg = await readJson(path.join(root, 'package.json'))
  const deps = (pkg?.dependencies && typeof pkg.dependencies === 'object' ? pkg.dependencies : {}) as Record<
    string,
    unknown
  >
  const missing: string[] = []
  for (const [name, range] of Object.entries(deps)) {
    // absent or broken in node_modules: counted as missing, so npm installs it
    const installed = await readJson(path.join(root, 'node_modules', name, 'package.json')).catch(() => undefined)
    const version = typeof installed?.version === 'string' ? installed.version : undefined
    // a range semver cannot read (a git URL, a tarball, an alias) is satisfied by any installed copy
    const satisfied =
      version !== undefined &&
      (typeof range !== 'string' ||
        !semver.validRange(range) ||
        semver.satisfies(version, range, { includePrerelease: true }))
    if (!satisfied) missing.push(name)
  }
  let lockfile: DependencyCheck['lockfile']
  for (const name of LOCKFILES) {
    if (
      await fs.stat(path.join(root, name)).then(
        () => true,
        () => false,
      )
    ) {
      lockfile = name
      break
    }
  }
  const check: DependencyCheck = { missing, total: Object.keys(deps).length }
  if (lockfile) check.lockfile = lockfile
  return check
}

export interface NpmInstallOptions {
  /** Run the packages' install scripts (`--allow-scripts` or the manifest's `npm.scripts`); off by default. */
  scripts: boolean
  /** The installing shell's environment: npm finds the user's config and cache through it. */
  env: NodeJS.ProcessEnv
  /** Names the connector in messages. */
  key: string
}

/**
 * `npm ci` when a lockfile is present, else `npm install`; production
 * dependencies only, always without scripts. With consent, `npm rebuild`
 * then runs the install scripts of the dependencies and of the package
 * itself (never its `prepare`, a build step that needs its dev
 * dependencies), native builds against the local node headers.
 */
export async function installDependencies(
  dir: string,
  check: DependencyCheck,
  options: NpmInstallOptions,
): Promise<{ ms: number; command: string }> {
  const npm = await which('npm', { path: options.env.PATH ?? '', nothrow: true })
  const needs = check.missing.length ? `npm dependencies (${check.missing.join(', ')})` : 'install scripts'
  const noNpm = `connector "${options.key}" has ${needs}, but npm is not on this shell's PATH`
  if (!npm) throw new TuttiError(ErrorCodes.DEPENDENCIES_FAILED, noNpm)
  const started = Date.now()
  const commands: string[] = []
  const npmRun = async (args: string[], env: NodeJS.ProcessEnv, what: string) => {
    commands.push(`npm ${args.join(' ')}`)
    const { code, stderr } = await runCommand(npm, args, { cwd: dir, env })
    if (code === 0) return
    const tail = stderr.trim().split('\n').slice(-NPM_ERROR_LINES).join('\n')
    const failed = `${what} failed for connector "${options.key}" (exit ${code}); nothing was installed`
    throw new TuttiError(ErrorCodes.DEPENDENCIES_FAILED, `${failed}:\n${tail}`)
  }
  if (check.missing.length) {
    const args = check.lockfile ? ['ci'] : ['install', '--no-package-lock']
    args.push('--omit=dev', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts')
    await npmRun(args, options.env, `npm ${args[0]}`)
  }
  const rebuild = 'npm rebuild (the install scripts)'
  if (options.scripts) await npmRun(['rebuild', '--loglevel=error'], await nativeBuildEnv(options.env), rebuild)
  return { ms: Date.now() - started, command: commands.join(' && ') }
}
