import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'

/** The daemon's own entry file: it loads no CLI framework. */
export const DAEMON_ENTRY = fileURLToPath(new URL('../daemon/main.js', import.meta.url))

/** Spawn a detached daemon whose output goes to daemon.log. Returns its pid. */
export async function spawnDaemon(paths: StatePaths): Promise<{ pid: number; exited: () => boolean }> {
  await ensurePrivateDir(paths.root)
  const logFd = fs.openSync(paths.daemonLog, 'a', 0o600)
  let exited = false
  try {
    const child = spawn(process.execPath, [DAEMON_ENTRY], {
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
