import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'

/**
 * The daemon's entry: the bundle `npm run build` makes of it
 * (scripts/bundle-daemon.js; one file to load instead of ~300), or tsc's
 * module graph it was made from. Both load no CLI framework.
 */
export const DAEMON_BUNDLE = fileURLToPath(new URL('../../daemon/main.js', import.meta.url))
export const DAEMON_MODULES_ENTRY = fileURLToPath(new URL('../daemon/main.js', import.meta.url))

/**
 * The bundle, unless tsc rebuilt the modules after it was made (a build
 * without the bundle step): then the modules, which are current. A package
 * gives every file the same mtime, so an installed tutti runs its bundle.
 */
export function daemonEntry(bundle = DAEMON_BUNDLE, modulesEntry = DAEMON_MODULES_ENTRY): string {
  const bundled = fs.statSync(bundle, { throwIfNoEntry: false })
  const built = fs.statSync(modulesEntry, { throwIfNoEntry: false })
  return bundled && (!built || bundled.mtimeMs >= built.mtimeMs) ? bundle : modulesEntry
}

/** Spawn a detached daemon whose output goes to daemon.log. Returns its pid. */
export async function spawnDaemon(paths: StatePaths): Promise<{ pid: number; exited: () => boolean }> {
  await ensurePrivateDir(paths.root)
  const logFd = fs.openSync(paths.daemonLog, 'a', 0o600)
  let exited = false
  try {
    const child = spawn(process.execPath, [daemonEntry()], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: paths.root,
      env: { ...process.env, TUTTI_STATE_DIR: paths.root },
    })
    child.on('exit', () => {
      exited = true
    })
    child.on('error', () => {
      exited = true
    })
    child.unref()
    if (child.pid === undefined) throw new Error('spawn returned no pid')
    return { pid: child.pid, exited: () => exited }
  } finally {
    fs.closeSync(logFd)
  }
}

/** The last lines of daemon.log that explain why a start failed. */
export function logTail(paths: StatePaths, lines = 5): string {
  try {
    const text = fs.readFileSync(paths.daemonLog, 'utf8')
    return text.trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no daemon.log)'
  }
}
