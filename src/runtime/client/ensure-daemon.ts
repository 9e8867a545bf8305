import fs from 'node:fs/promises'
import { readDaemonInfo, removeDaemonInfoIfOurs } from '../store/daemon-info.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { StatePaths } from '../paths.js'
import type { SpawnedDaemon } from './daemon-process.js'
import { isAlive, terminateProven, waitForExit } from '../proc/pid.js'
import { CONTROL_PROTOCOL_VERSION } from '../control-protocol/version.js'
import { PRODUCT_VERSION } from '../version.js'
import { DaemonClient } from './daemon-client.js'
import { proveDaemon, type DaemonProbe, type DaemonProof, type Health } from './daemon-identity.js'

// the lock library and the spawner (child_process) are only needed on the slow path
const lockModule = () => import('../fs/lock.js')
const processModule = () => import('./daemon-process.js')
const lockOwnerModule = () => import('./lock-owner-daemon.js')

/** A new daemon may first wait for a dead one's lock to go stale (fs/lock.ts), then start its listener. */
const START_TIMEOUT_MS = 20_000
/**
 * How often a starting daemon's health is asked for: its start is a few
 * hundred ms, and the CLI waits on it. Watching the state dir for daemon.json
 * instead got the first request there ~10 ms sooner, but no command sooner:
 * the answer waits for the start-up reconcile, which takes longer.
 */
const START_POLL_MS = 15
/** How long a daemon of another version gets to stop politely, and then after TERM. */
const RETIRE_GRACE_MS = 5_000
/**
 * A daemon that crashed during start (V8 aborts on a damaged code cache) is
 * started once more: the next start finds the crashed one's marker and runs
 * without the cache, removing it (daemon/code-cache.ts).
 */
const START_ATTEMPTS = 2

function matchesOurVersion(v: { productVersion: string; protocolVersion: number }): boolean {
  return v.productVersion === PRODUCT_VERSION && v.protocolVersion === CONTROL_PROTOCOL_VERSION
}

/**
 * The daemon daemon.json describes, proven (see daemon-identity.ts), and
 * whether it is of another version. A daemon.json that proves none (gone,
 * damaged, naming another process) is not the last word while the lock's
 * owner record proves its holder alive: that daemon writes the file again,
 * and is found then (lock-owner-daemon.ts). A valid daemon.json costs
 * nothing more.
 */
export async function locateDaemon(paths: StatePaths): Promise<DaemonProbe> {
  const info = await readDaemonInfo(paths)
  const seen: DaemonProbe = info ? { info, proof: await proveDaemon(paths, info) } : {}
  if (seen.proof?.proven) return seen
  return (await (await lockOwnerModule()).lockOwnersDaemon(paths, seen)) ?? seen
}

/** A running daemon of our version (or as `accept` says), or undefined. Never starts one. */
export async function findDaemon(
  paths: StatePaths,
  accept: (health: Health) => boolean = matchesOurVersion,
): Promise<DaemonClient | undefined> {
  const { proof } = await locateDaemon(paths)
  return proof?.proven && accept(proof.health) ? proof.client : undefined
}

export interface EnsureDaemonOptions {
  /**
   * Any proven daemon of this state dir will do, whatever its version (a
   * running agent's watch: its token and port are the state dir's, and an
   * older CLI that replaced a newer daemon would fight the newer CLIs).
   */
  anyVersion?: boolean
}

/**
 * Lazy, race-free start (DESIGN §15): fast path without a lock; otherwise
 * take the start lock, look again, replace a proven daemon of another
 * version (polite stop first), clear what a crashed one left, spawn, wait
 * for health.
 */
export async function ensureDaemon(paths: StatePaths, options: EnsureDaemonOptions = {}): Promise<DaemonClient> {
  const accept = options.anyVersion ? () => true : matchesOurVersion
  const fast = await findDaemon(paths, accept)
  if (fast) return fast
  const { withLock } = await lockModule()
  return withLock(paths.startLockTarget, async () => {
    const { info, proof } = await locateDaemon(paths)
    if (proof?.proven && accept(proof.health)) return proof.client
    if (info && proof?.proven) await retire(paths, proof)
    else if (info && proof?.client) {
      // an older daemon of this state dir: asked to stop, and given the time to; never signalled
      await proof.client.stop(false).catch(() => undefined)
      await waitForExit(info.pid, RETIRE_GRACE_MS)
    }
    // alive but not answering even patiently: neither replaced nor signalled
    else if (info && proof && !proof.proven && proof.busy)
      throw new TuttiError(
        ErrorCodes.DAEMON_UNREACHABLE,
        `the daemon does not answer: ${proof.why}; see daemon.log, or stop it yourself`,
      )
    // a stale daemon.json (nothing answers, another process or state dir): removed, never acted on
    else if (info) await removeDaemonInfoIfOurs(paths, info.pid)
    await clearOrphans(paths)
    return start(paths, accept)
  })
}

/** Stop a proven daemon of another version: ask it to stop, then TERM, then KILL, while it is still that process. */
async function retire(paths: StatePaths, proof: Extract<DaemonProof, { proven: true }>): Promise<void> {
  // a version replacement is not a user stop: keep sessions so running agents reconnect
  // it may exit before it answers: waitForExit below decides, and TERM, then KILL, follow if it did not
  await proof.client.stop(false).catch(() => undefined)
  if (!(await waitForExit(proof.process.pid, RETIRE_GRACE_MS))) await terminateProven(proof.process, RETIRE_GRACE_MS)
  await removeDaemonInfoIfOurs(paths, proof.process.pid)
}

/**
 * A daemon that died without cleaning up leaves daemon.pid and its lock
 * behind. daemon.pid goes when its pid is dead (a live one is never
 * signalled: it may be anyone by now). The lock is the new daemon's to take
 * over, at once when its owner record proves the holder gone (fs/lock.ts).
 */
async function clearOrphans(paths: StatePaths): Promise<void> {
  // no daemon.pid, or unreadable: no live pid to keep, so it is removed below
  const pid = Number.parseInt(await fs.readFile(paths.daemonPid, 'utf8').catch(() => ''), 10)
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) return
  await fs.rm(paths.daemonPid, { force: true })
}

async function start(paths: StatePaths, accept: (health: Health) => boolean): Promise<DaemonClient> {
  const existing = await findDaemon(paths, accept)
  if (existing) return existing
  const { logTail, spawnDaemon } = await processModule()
  for (let attempt = 1; ; attempt++) {
    const child = await spawnDaemon(paths)
    const client = await untilHealthy(paths, child, logTail, accept)
    if (client) return client
    const crash = child.crashed()
    if (crash && attempt < START_ATTEMPTS) continue
    const how = crash ? `crashed during start (${crash}), also when started again` : 'exited during start'
    throw new TuttiError(ErrorCodes.DAEMON_START_FAILED, `the daemon ${how}; daemon.log says:\n${logTail(paths)}`)
  }
}

/** The spawned daemon's client once it answers health, or undefined once it has exited. */
async function untilHealthy(
  paths: StatePaths,
  child: SpawnedDaemon,
  logTail: (p: StatePaths) => string,
  accept: (health: Health) => boolean,
) {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    const info = await readDaemonInfo(paths)
    if (info?.pid === child.pid) {
      const client = new DaemonClient(info)
      // not answering yet: polled again until it does, exits, or the deadline passes
      const health = await client.health().catch(() => undefined)
      if (health && accept(health)) return client
    }
    if (child.exited()) return undefined
    await new Promise((r) => setTimeout(r, START_POLL_MS))
  }
  const late = `the daemon did not become healthy within ${START_TIMEOUT_MS} ms`
  throw new TuttiError(ErrorCodes.DAEMON_START_FAILED, `${late}; daemon.log says:\n${logTail(paths)}`)
}
