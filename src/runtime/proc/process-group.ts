import { spawn, type ChildProcess } from 'node:child_process'
import { isAlive, waitUntil } from './pid.js'

/**
 * Children that run in their own process group, so that stopping one stops
 * everything it started (npx wrappers, shells, grandchildren). Every live
 * group is remembered so that the daemon can kill them all if it exits.
 */
const liveGroups = new Set<number>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL')
  })
}

export interface GroupSpawnOptions {
  cwd: string
  env: NodeJS.ProcessEnv
}

export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  installExitHook()
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true })
  const pid = child.pid
  if (pid !== undefined) {
    liveGroups.add(pid)
    child.once('exit', () => {
      // the leader is gone; anything it left in the group still gets cleaned up on close
      if (!groupAlive(pid)) liveGroups.delete(pid)
    })
  }
  return child
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(process.platform === 'win32' ? pgid : -pgid, signal)
    return true
  } catch {
    return false
  }
}

/** Whether any process of the group is still alive (the leader may already be gone). */
export function groupAlive(pgid: number): boolean {
  if (process.platform === 'win32') return isAlive(pgid)
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

const waitGroupGone = (pgid: number, ms: number): Promise<boolean> => waitUntil(() => !groupAlive(pgid), ms)

/**
 * Polite stop of a whole group: the caller has already ended stdin; wait a
 * grace period, then TERM the group, then KILL it.
 */
export async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  if (!(await waitGroupGone(pgid, graceMs))) {
    signalGroup(pgid, 'SIGTERM')
    if (!(await waitGroupGone(pgid, graceMs))) {
      signalGroup(pgid, 'SIGKILL')
      await waitGroupGone(pgid, 1000)
    }
  }
  liveGroups.delete(pgid)
}
