// Spawning, stopping and auditing every process the benchmark starts.
//
// Each long-lived process is spawned detached, so it leads its own process
// group, and is stopped by signalling the whole group (SIGTERM, a grace
// period, then SIGKILL). Every process also carries RUN_MARKER in its
// environment and runs with a cwd inside the run's temp dir, so processes
// that escape their group (supergateway detaches its children; tutti's daemon
// detaches itself and its upstreams) are still found by `findLeftovers()`.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { sleep } from './wait.js'

export const RUN_MARKER = 'TUTTI_BENCH_RUN'

/**
 * @typedef {object} Proc
 * @property {string} name
 * @property {number} pid        also the process group id (detached)
 * @property {string} logFile    stdout+stderr of the process
 * @property {() => boolean} exited
 * @property {() => string} exitReason
 */

/** @type {Set<Proc>} */
const live = new Set()

/**
 * Set once the run is being torn down (a signal): a section still running must not start anything the
 * cleanup has already looked for, so spawnGroup and the tutti CLI refuse from then on.
 */
export const teardown = { started: false }

/**
 * Spawn `command args` as the leader of a new process group, stdin from
 * /dev/null, stdout+stderr appended to `logFile`.
 * @param {string} name
 * @param {string} command
 * @param {string[]} args
 * @param {{ env: NodeJS.ProcessEnv, cwd: string, logFile: string }} opts
 * @returns {Promise<Proc>}
 */
export async function spawnGroup(name, command, args, { env, cwd, logFile }) {
  if (teardown.started) throw new Error(`${name}: not started, the run is being cleaned up`)
  const fd = fs.openSync(logFile, 'a')
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env, cwd })
    let exited = false
    let reason = ''
    child.on('exit', (code, signal) => {
      exited = true
      reason = signal ? `killed by ${signal}` : `exited with code ${code}`
    })
    await new Promise((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', (err) => {
        exited = true
        reason = err.message
        reject(new Error(`${name}: cannot spawn ${command}: ${err.message}`))
      })
    })
    if (child.pid === undefined) throw new Error(`${name}: spawn returned no pid`)
    /** @type {Proc} */
    const proc = { name, pid: child.pid, logFile, exited: () => exited, exitReason: () => reason }
    live.add(proc)
    return proc
  } finally {
    fs.closeSync(fd)
  }
}

/** True while any process of group `pgid` exists (zombies included). @param {number} pgid */
export function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM'
  }
}

/** True while process `pid` exists and is not a zombie. @param {number} pid */
export function pidAlive(pid) {
  const stat = readStat(pid)
  return stat !== undefined && stat.state !== 'Z'
}

/** @param {number} pgid @param {NodeJS.Signals} signal */
function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal)
  } catch {
    // already gone
  }
}

/**
 * Stop a process group: SIGTERM, wait up to `graceMs`, then SIGKILL and wait
 * up to 2 s more. Returns how it ended.
 * @param {number} pgid
 * @param {number} [graceMs]
 */
export async function stopGroup(pgid, graceMs = 5000) {
  if (!groupAlive(pgid)) return 'already gone'
  signalGroup(pgid, 'SIGTERM')
  if (await waitGone(() => groupAlive(pgid), graceMs)) return 'SIGTERM'
  signalGroup(pgid, 'SIGKILL')
  if (await waitGone(() => groupAlive(pgid), 2000)) return 'SIGKILL'
  return 'still alive after SIGKILL'
}

/** Stop one spawned process (its whole group) and forget it. @param {Proc} proc @param {number} [graceMs] */
export async function stopProc(proc, graceMs) {
  live.delete(proc)
  return stopGroup(proc.pid, graceMs)
}

/** Stop every process group still registered (used on the way out). */
export async function stopAll() {
  const procs = [...live]
  live.clear()
  return Promise.all(procs.map(async (p) => ({ name: p.name, pid: p.pid, how: await stopGroup(p.pid, 3000) })))
}

/** @param {() => boolean} alive @param {number} ms */
async function waitGone(alive, ms) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (!alive()) return true
    await sleep(50)
  }
  return !alive()
}

/** Last `lines` lines of a log file, for error messages. @param {string} file */
export function logTail(file, lines = 6) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no log)'
  }
}

/**
 * @param {number} pid
 * @returns {{ pid: number, comm: string, state: string, ppid: number, pgid: number } | undefined}
 */
function readStat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = text.lastIndexOf(')')
    const comm = text.slice(text.indexOf('(') + 1, close)
    const rest = text.slice(close + 2).split(' ')
    return { pid, comm, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]) }
  } catch {
    return undefined
  }
}

/** @param {string} file @param {string} fallback */
function readOr(file, fallback) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return fallback
  }
}

/**
 * Processes (not zombies, not this one) that belong to this run: their
 * environment carries `RUN_MARKER=runId`, or their cwd or command line is
 * inside `runRoot`.
 * @param {string} runId
 * @param {string} runRoot
 * @returns {{ pid: number, pgid: number, cmd: string }[]}
 */
export function findLeftovers(runId, runRoot) {
  const marker = `${RUN_MARKER}=${runId}`
  const found = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    const stat = readStat(pid)
    if (!stat || stat.state === 'Z') continue
    const env = readOr(`/proc/${pid}/environ`, '')
    const cmd = readOr(`/proc/${pid}/cmdline`, '').split('\0').join(' ').trim()
    let cwd = ''
    try {
      cwd = fs.readlinkSync(`/proc/${pid}/cwd`)
    } catch {
      // gone or not ours
    }
    const mine =
      env.split('\0').includes(marker) || cwd === runRoot || cwd.startsWith(`${runRoot}/`) || cmd.includes(runRoot)
    if (mine) found.push({ pid, pgid: stat.pgid, cmd: cmd || stat.comm })
  }
  return found
}

/**
 * Kill what `findLeftovers` reports, by pid (and by group when the process
 * leads its own group), then look again. Returns what was found first and
 * what survived.
 * @param {string} runId
 * @param {string} runRoot
 */
export async function reapLeftovers(runId, runRoot) {
  const found = findLeftovers(runId, runRoot)
  for (const p of found) {
    try {
      if (p.pgid === p.pid) process.kill(-p.pid, 'SIGKILL')
      else process.kill(p.pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
  if (found.length) await waitGone(() => findLeftovers(runId, runRoot).length > 0, 3000)
  return { found, survivors: findLeftovers(runId, runRoot) }
}
