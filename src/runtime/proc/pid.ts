import { readFileSync, readlinkSync } from 'node:fs'

/** A zombie (exited, not yet reaped: common under a container init that does not reap) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    // ESRCH: no such process; EPERM: alive, but another user's
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (process.platform !== 'linux') return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    // the /proc entry vanished: the process exited meanwhile
    return false
  }
}

/**
 * When the process started, in clock ticks since boot (Linux; undefined
 * elsewhere or when it is gone). A pid and its start time together name one
 * process: a reused pid has another start time.
 */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    // gone, or no /proc: no start time to compare
    return undefined
  }
}

/** The process identity that may be signalled: its pid and, where the OS tells, its start time. */
export interface ProvenProcess {
  pid: number
  startTicks?: string
}

/** Still the same process (not gone, not a reused pid)? */
export function stillSame(p: ProvenProcess): boolean {
  if (!isAlive(p.pid)) return false
  return p.startTicks === undefined || processStartTicks(p.pid) === p.startTicks
}

/**
 * A process as a record it can leave behind (a lock's holder): pid, start
 * time and pid namespace, so that another process can later prove it gone.
 */
export interface ProcessRecord {
  pid: number
  startTicks?: string
  /** `/proc/self/ns/pid`'s link: a pid means nothing in another namespace (a state dir shared with a container). */
  pidNamespace?: string
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    // no /proc: no namespace to record
    return undefined
  }
}

/** This process as a record. */
export function thisProcess(): ProcessRecord {
  const startTicks = processStartTicks(process.pid)
  const ns = pidNamespace()
  return { pid: process.pid, ...(startTicks ? { startTicks } : {}), ...(ns ? { pidNamespace: ns } : {}) }
}

/**
 * Whether the recorded process is provably gone: recorded in our pid
 * namespace, and its pid is dead or names a process that started at another
 * time. A record that cannot be checked this way is never proven gone.
 */
export function provenGone(r: ProcessRecord): boolean {
  if (!Number.isInteger(r.pid) || r.pid <= 0 || r.pidNamespace !== pidNamespace()) return false
  if (!isAlive(r.pid)) return true
  return r.startTicks !== undefined && processStartTicks(r.pid) !== r.startTicks
}

/**
 * Whether the recorded process is provably alive: recorded in our pid
 * namespace, and its pid names a live process (with that start time, where
 * recorded). What a CLI waits for rather than starting a rival; never a
 * reason to signal it.
 */
export function provenAlive(r: ProcessRecord): boolean {
  return Number.isInteger(r.pid) && r.pid > 0 && r.pidNamespace === pidNamespace() && stillSame(r)
}

/** How often a wait for a process looks again: cheap (one kill(0)), and quick enough for a CLI. */
const POLL_INTERVAL_MS = 20
/** After SIGKILL the kernel needs a moment to reap the process. */
const KILL_SETTLE_MS = 2_000

/** Poll `done` every 20 ms until it holds or `timeoutMs` passes; resolves whether it held. */
export async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (done()) return true
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS))
  }
  return done()
}

export function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  return waitUntil(() => !isAlive(pid), timeoutMs)
}

/**
 * Polite stop for a process whose identity the caller proved: TERM, wait,
 * then KILL, each only while it is still that same process.
 */
export async function terminateProven(p: ProvenProcess, graceMs: number): Promise<boolean> {
  if (!stillSame(p)) return true
  try {
    process.kill(p.pid, 'SIGTERM')
  } catch {
    // it exited meanwhile (ESRCH): terminated
    return true
  }
  if (await waitUntil(() => !stillSame(p), graceMs)) return true
  if (!stillSame(p)) return true
  try {
    process.kill(p.pid, 'SIGKILL')
  } catch {
    // it exited meanwhile (ESRCH): terminated
    return true
  }
  return waitUntil(() => !stillSame(p), KILL_SETTLE_MS)
}
