import fs from 'node:fs/promises'
import path from 'node:path'
import which from 'which'
import { runCommand } from '../proc/run-command.js'

/**
 * Which packages of a release would run code when installed: npm's
 * lifecycle scripts of an install (preinstall, install, postinstall) and a
 * `binding.gyp`, which npm builds with node-gyp when no install script says
 * otherwise. They run only with the user's consent (`--allow-scripts` or
 * the manifest's `npm.scripts`).
 */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const

/** A package that would run code at install, and what it would run. */
export interface ScriptedPackage {
  /** "." for the package itself, else its name in node_modules. */
  name: string
  /** The scripts' names, or "binding.gyp" for an implicit node-gyp build; empty when only the lockfile says so. */
  scripts: string[]
}

const readJson = async (file: string): Promise<Record<string, unknown> | undefined> => {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as unknown
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined
  } catch {
    // absent or not JSON: no scripts known from it (npm refuses a broken package.json itself)
    return undefined
  }
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  )

/** The install-time scripts of the package in `dir` (none when it has no package.json). */
export async function ownInstallScripts(dir: string): Promise<string[]> {
  const pkg = await readJson(path.join(dir, 'package.json'))
  if (!pkg) return []
  const declared = pkg.scripts && typeof pkg.scripts === 'object' ? (pkg.scripts as Record<string, unknown>) : {}
  const scripts: string[] = INSTALL_SCRIPTS.filter((name) => typeof declared[name] === 'string')
  // npm's default: a binding.gyp without an install or preinstall script is built with `node-gyp rebuild`
  const gyp = !declared.install && !declared.preinstall && (await exists(path.join(dir, 'binding.gyp')))
  if (gyp) scripts.push('binding.gyp')
  return scripts
}

/** The packages a lockfile marks `hasInstallScript` (npm's own record of it). */
export async function lockedInstallScripts(lockfile: string): Promise<ScriptedPackage[]> {
  const lock = await readJson(lockfile)
  const packages = (lock?.packages && typeof lock.packages === 'object' ? lock.packages : {}) as Record<
    string,
    Record<string, unknown>
  >
  const out: ScriptedPackage[] = []
  for (const [at, entry] of Object.entries(packages)) {
    if (at === '' || entry?.hasInstallScript !== true || entry.dev === true) continue
    out.push({ name: at.slice(at.lastIndexOf('node_modules/') + 'node_modules/'.length), scripts: [] })
  }
  return out
}

/**
 * What would run at install for the package in `root`, with nothing
 * written to it: its own scripts, and its dependencies' from its lockfile,
 * or from the lockfile npm resolves (metadata only, `--package-lock-only`)
 * in a scratch copy of its package.json.
 */
export interface FoundScripts {
  packages: ScriptedPackage[]
  /** Why the dependencies' scripts could not be known (npm missing or failing). */
  unresolved?: string
}

export async function scriptedPackages(root: string, env: NodeJS.ProcessEnv, scratch: string): Promise<FoundScripts> {
  const packages: ScriptedPackage[] = []
  const own = await ownInstallScripts(root)
  if (own.length) packages.push({ name: '.', scripts: own })
  const pkg = await readJson(path.join(root, 'package.json'))
  const deps = pkg?.dependencies && typeof pkg.dependencies === 'object' ? Object.keys(pkg.dependencies) : []
  if (!deps.length) return { packages }
  for (const name of ['npm-shrinkwrap.json', 'package-lock.json']) {
    const lockfile = path.join(root, name)
    if (await exists(lockfile)) return { packages: [...packages, ...(await lockedInstallScripts(lockfile))] }
  }
  const npm = await which('npm', { path: env.PATH ?? '', nothrow: true })
  if (!npm) return { packages, unresolved: "npm is not on this shell's PATH" }
  const dir = await fs.mkdtemp(path.join(scratch, 'lock-'))
  try {
    await fs.copyFile(path.join(root, 'package.json'), path.join(dir, 'package.json'))
    const args = ['install', '--package-lock-only', '--ignore-scripts', '--omit=dev']
    args.push('--no-audit', '--no-fund', '--loglevel=error')
    const { code, stderr } = await runCommand(npm, args, { cwd: dir, env })
    const last = stderr.trim().split('\n').pop() || `exit ${code}`
    if (code !== 0) return { packages, unresolved: `npm could not resolve the dependencies: ${last}` }
    return { packages: [...packages, ...(await lockedInstallScripts(path.join(dir, 'package-lock.json')))] }
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

/**
 * The environment a native build runs in: node-gyp pointed at the running
 * node's own headers (`<prefix>/include/node`), so nothing is downloaded.
 * A nodedir the user set is kept.
 */
export async function nativeBuildEnv(env: NodeJS.ProcessEnv, execPath = process.execPath): Promise<NodeJS.ProcessEnv> {
  if (env.npm_config_nodedir || env.NPM_CONFIG_NODEDIR) return env
  const prefix = path.dirname(path.dirname(execPath))
  if (!(await exists(path.join(prefix, 'include', 'node', 'node.h')))) return env
  return { ...env, npm_config_nodedir: prefix }
}
