import fs from 'node:fs'
import path from 'node:path'

/**
 * Reaping what a test run left running: daemons of the suite's state dirs and
 * the upstream process groups they recorded. Nothing is signalled unless it
 * proves what it is, from /proc (Linux):
 *
 * - a daemon: its environment holds TUTTI_STATE_DIR=<that state dir> and its
 *   command line runs the daemon entry (…/daemon/main.js) or `… daemon run`;
 * - an upstream: it is in a process group recorded in <stateDir>/upstreams/,
 *   and its environment holds TUTTI_UPSTREAM_OF=<the record's marker>.
 *
 * Synchronous on purpose: it also runs from a process 'exit' handler, where
 * nothing asynchronous gets to finish. Self-contained on purpose: it must
 * still work when src/ does not build.
 */

/** What src/runtime/proc/group-records.ts puts in every upstream's environment. */
const UPSTREAM_MARKER_VAR = 'TUTTI_UPSTREAM_OF'

interface Proven {
  pid: number
  /** The start time from /proc/<pid>/stat: a reused pid has another one, and is never signalled. */
  startTicks: string
}

export interface Reaped {
  daemons: number[]
  upstreams: number[]
}

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/** Fields of /proc/<pid>/stat after the command name: [0] state, [2] pgid, [19] start time. */
function statFields(pid: number): string[] | undefined {
  const stat = read(`/proc/${pid}/stat`)
  return stat === undefined ? undefined : stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

function alive(p: Proven): boolean {
  const fields = statFields(p.pid)
  return fields !== undefined && fields[0] !== 'Z' && fields[19] === p.startTicks
}

const nulList = (file: string): string[] => (read(file) ?? '').split('\0').filter(Boolean)

function allPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => pid !== process.pid)
}

/** The argv of a daemon: the detached entry file, or the foreground `daemon run`. */
export function isDaemonCommand(argv: string[]): boolean {
  if (argv.some((a) => a.replace(/\\/g, '/').endsWith('/daemon/main.js'))) return true
  const i = argv.indexOf('daemon')
  return i > 0 && argv[i + 1] === 'run'
}

/** The process, if it is a daemon serving `stateDir`; its start time is taken before the checks. */
export function proveDaemon(pid: number, stateDir: string): Proven | undefined {
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return undefined
  const fields = statFields(pid)
  if (!fields || fields[0] === 'Z') return undefined
  if (!nulList(`/proc/${pid}/environ`).includes(`TUTTI_STATE_DIR=${stateDir}`)) return undefined
  if (!isDaemonCommand(nulList(`/proc/${pid}/cmdline`))) return undefined
  return { pid, startTicks: fields[19]! }
}

/** Pids a state dir names as its daemon: daemon.json, and the singleton lock's daemon.pid. */
function namedPids(stateDir: string): number[] {
  const out: number[] = []
  try {
    out.push(Number(JSON.parse(read(path.join(stateDir, 'daemon.json')) ?? 'null')?.pid))
  } catch {
    // an unreadable daemon.json names nobody
  }
  out.push(Number((read(path.join(stateDir, 'daemon.pid')) ?? '').trim()))
  return out.filter((pid) => Number.isInteger(pid) && pid > 1)
}

/** Block the thread for `ms` (there is no event loop left in an 'exit' handler). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

function signal(p: Proven, sig: NodeJS.Signals): void {
  if (!alive(p)) return
  try {
    process.kill(p.pid, sig)
  } catch {
    // gone meanwhile
  }
}

/** SIGTERM, wait up to `graceMs` for all of them, then SIGKILL whoever is left. */
function terminate(procs: Proven[], graceMs: number): void {
  for (const p of procs) signal(p, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (procs.some(alive) && Date.now() < deadline) pause(25)
  for (const p of procs) signal(p, 'SIGKILL')
  const killDeadline = Date.now() + 2000
  while (procs.some(alive) && Date.now() < killDeadline) pause(25)
}

/** Upstream group records of a state dir: pgid → the marker its members carry. */
function groupRecords(stateDir: string): Map<number, string> {
  const out = new Map<number, string>()
  const dir = path.join(stateDir, 'upstreams')
  let names: string[] = []
  try {
    names = fs.readdirSync(dir)
  } catch {
    return out
  }
  for (const name of names) {
    try {
      const r = JSON.parse(read(path.join(dir, name)) ?? 'null') as { pgid?: unknown; marker?: unknown }
      // the same bar the daemon sets: a short marker proves nothing
      if (Number.isInteger(r?.pgid) && typeof r.marker === 'string' && r.marker.length >= 16)
        out.set(r.pgid as number, r.marker)
    } catch {
      // an unreadable record proves nothing
    }
  }
  return out
}

/**
 * Stop every proven daemon of these state dirs, then kill the proven members
 * of every upstream group they recorded. Returns the pids signalled.
 */
export function reapStateDirs(stateDirs: Iterable<string>, options: { graceMs?: number } = {}): Reaped {
  const dirs = [...new Set(stateDirs)]
  const reaped: Reaped = { daemons: [], upstreams: [] }
  if (process.platform !== 'linux' || !dirs.length) return reaped
  const daemons = new Map<number, Proven>()
  for (const dir of dirs) {
    for (const pid of namedPids(dir)) {
      const p = proveDaemon(pid, dir)
      if (p) daemons.set(pid, p)
    }
  }
  // a daemon whose daemon.json was removed or overwritten still proves itself by its environment
  const wanted = new Set(dirs.map((d) => `TUTTI_STATE_DIR=${d}`))
  for (const pid of allPids()) {
    if (daemons.has(pid)) continue
    const dir = nulList(`/proc/${pid}/environ`).find((e) => wanted.has(e))
    const p = dir === undefined ? undefined : proveDaemon(pid, dir.slice('TUTTI_STATE_DIR='.length))
    if (p) daemons.set(pid, p)
  }
  terminate([...daemons.values()], options.graceMs ?? 5000)
  reaped.daemons = [...daemons.keys()]

  // read the records only now: a daemon that stopped cleanly removed its own
  const groups = new Map<number, string>()
  for (const dir of dirs)
    for (const [pgid, marker] of groupRecords(dir)) groups.set(pgid, `${UPSTREAM_MARKER_VAR}=${marker}`)
  if (!groups.size) return reaped
  for (const pid of allPids()) {
    const fields = statFields(pid)
    const marker = fields && fields[0] !== 'Z' ? groups.get(Number(fields[2])) : undefined
    if (!marker || !nulList(`/proc/${pid}/environ`).includes(marker)) continue
    signal({ pid, startTicks: fields![19]! }, 'SIGKILL')
    reaped.upstreams.push(pid)
  }
  return reaped
}
