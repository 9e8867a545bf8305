import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { UPSTREAM_MARKER_VAR, type GroupRecords } from './group-records.js'
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

let records: GroupRecords | undefined

/** The daemon records every group it starts (and marks its members), so a successor can reap them. */
export function recordGroupsIn(groupRecords: GroupRecords): void {
  records = groupRecords
}

/**
 * Linux's parent-death signal, through util-linux's setpriv (it execs, so the
 * pid stays the server's): a server that ignores stdin EOF still dies with a
 * daemon that was killed -9. Grandchildren are reaped by the next daemon.
 */
const SETPRIV = '/usr/bin/setpriv'
/** After SIGKILL the kernel needs a moment to reap the group; past it, the group is reported gone anyway. */
const KILL_SETTLE_MS = 1_000
const pdeathsig = process.platform === 'linux' && fs.existsSync(SETPRIV)

export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  installExitHook()
  const env = records ? { ...options.env, [UPSTREAM_MARKER_VAR]: records.marker } : options.env
  const [file, argv] =
    pdeathsig && path.isAbsolute(command)
      ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]]
      : [command, [...args]]
  const child = spawn(file, argv, {
    cwd: options.cwd,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  })
  const pid = child.pid
  if (pid !== undefined) {
    liveGroups.add(pid)
    records?.add(pid)
    child.once('exit', () => {
      // the leader is gone; anything it left in the group still gets cleaned up on close
      if (!groupAlive(pid)) forget(pid)
    })
  }
  return child
}

function forget(pgid: number): void {
  liveGroups.delete(pgid)
  records?.remove(pgid)
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(process.platform === 'win32' ? pgid : -pgid, signal)
    return true
  } catch {
    // no such group (all exited) or not ours: false says nothing was signalled
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
    // ESRCH: no process of the group is left
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
      await waitGroupGone(pgid, KILL_SETTLE_MS)
    }
  }
  forget(pgid)
}
