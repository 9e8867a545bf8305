import { readFileSync } from 'node:fs'

/** A zombie (exited, not yet reaped: common under a container init that does not reap) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (process.platform !== 'linux') return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

/**
 * Whether `pid` still runs the given script. Guards against pid reuse after
 * a crash: on Linux we can read the command line; elsewhere we trust the pid.
 */
export function runsScript(pid: number, scriptPath: string): boolean {
  if (!isAlive(pid)) return false
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(scriptPath)
  } catch {
    return process.platform !== 'linux'
  }
}

/** Poll `done` every 20 ms until it holds or `timeoutMs` passes; resolves whether it held. */
export async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (done()) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return done()
}

export function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  return waitUntil(() => !isAlive(pid), timeoutMs)
}

/** Polite stop for a process: TERM, wait, then KILL. Resolves true once it is gone. */
export async function terminate(pid: number, graceMs: number): Promise<boolean> {
  try {
    process.kill(pid, 'SIGTERM')
  } catch {
    return true
  }
  if (await waitForExit(pid, graceMs)) return true
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    return true
  }
  return waitForExit(pid, 2000)
}
