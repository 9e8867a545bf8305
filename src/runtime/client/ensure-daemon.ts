import fs from 'node:fs/promises'
import { readDaemonInfo, type DaemonInfo } from '../protocol/daemon-info.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { StatePaths } from '../paths.js'
import { runsScript, terminate, waitForExit } from '../proc/pid.js'
import { CONTROL_PROTOCOL_VERSION } from '../protocol/version.js'
import { PRODUCT_VERSION } from '../version.js'
import { DaemonClient } from './daemon-client.js'
import { DAEMON_ENTRY, logTail, spawnDaemon } from './daemon-process.js'

// the lock library is only needed on the slow path
const lockModule = () => import('../fs/lock.js')

const START_TIMEOUT_MS = 15_000

function matchesOurVersion(v: { productVersion: string; protocolVersion: number }): boolean {
  return v.productVersion === PRODUCT_VERSION && v.protocolVersion === CONTROL_PROTOCOL_VERSION
}

/** A client for a live daemon of our version described by daemon.json, or undefined. */
async function probe(paths: StatePaths): Promise<{ info?: DaemonInfo; client?: DaemonClient; foreignVersion?: boolean }> {
  const info = await readDaemonInfo(paths)
  if (!info) return {}
  const client = new DaemonClient(info)
  try {
    const health = await client.health()
    if (health.pid !== info.pid) return { info }
    if (!matchesOurVersion(health)) return { info, client, foreignVersion: true }
    return { info, client }
  } catch {
    return { info }
  }
}

/** A running daemon of our version, or undefined. Never starts one. */
export async function findDaemon(paths: StatePaths): Promise<DaemonClient | undefined> {
  const found = await probe(paths)
  return found.client && !found.foreignVersion ? found.client : undefined
}

/**
 * Lazy, race-free start (DESIGN §15): fast path without a lock; otherwise
 * take the start lock, look again, replace a daemon of another version
 * (polite stop first), clear what a crashed one left, spawn, wait for health.
 */
export async function ensureDaemon(paths: StatePaths): Promise<DaemonClient> {
  const fast = await findDaemon(paths)
  if (fast) return fast
  const { withLock } = await lockModule()
  return withLock(paths.startLockTarget, async () => {
    const found = await probe(paths)
    if (found.client && !found.foreignVersion) return found.client
    if (found.info) await retire(paths, found.info, found.client)
    await clearOrphans(paths)
    return start(paths)
  })
}

/** Stop the daemon described by `info`: ask it to stop, then TERM, then KILL. */
async function retire(paths: StatePaths, info: DaemonInfo, client: DaemonClient | undefined): Promise<void> {
  if (client) {
    // a version replacement is not a user stop: keep sessions so running agents reconnect
    await client.stop(false).catch(() => {})
    if (await waitForExit(info.pid, 5_000)) return
  }
  if (runsScript(info.pid, DAEMON_ENTRY)) await terminate(info.pid, 3_000)
  await fs.rm(paths.daemonJson, { force: true })
}

/** A daemon that died without cleaning up leaves daemon.json, daemon.pid and its lock behind. */
async function clearOrphans(paths: StatePaths): Promise<void> {
  const pid = Number.parseInt(await fs.readFile(`${paths.daemonLockTarget}.pid`, 'utf8').catch(() => ''), 10)
  if (Number.isInteger(pid) && runsScript(pid, DAEMON_ENTRY)) {
    // a daemon is alive but not answering (or still starting): give it a moment, then replace it
    const deadline = Date.now() + 3_000
    while (Date.now() < deadline) {
      const found = await probe(paths)
      if (found.client) return
      await new Promise((r) => setTimeout(r, 50))
    }
    await terminate(pid, 3_000)
  }
  await fs.rm(paths.daemonJson, { force: true })
  await fs.rm(`${paths.daemonLockTarget}.pid`, { force: true })
  await (await lockModule()).breakOrphanedLock(paths.daemonLockTarget)
}

async function start(paths: StatePaths): Promise<DaemonClient> {
  const existing = await findDaemon(paths)
  if (existing) return existing
  const child = await spawnDaemon(paths)
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    const info = await readDaemonInfo(paths)
    if (info?.pid === child.pid) {
      const client = new DaemonClient(info)
      const health = await client.health().catch(() => undefined)
      if (health && matchesOurVersion(health)) return client
    }
    if (child.exited()) {
      throw new TuttiError(ErrorCodes.DAEMON_START_FAILED, `the daemon exited during start; daemon.log says:\n${logTail(paths)}`)
    }
    await new Promise((r) => setTimeout(r, 15))
  }
  throw new TuttiError(ErrorCodes.DAEMON_START_FAILED, `the daemon did not become healthy within ${START_TIMEOUT_MS} ms; daemon.log says:\n${logTail(paths)}`)
}
