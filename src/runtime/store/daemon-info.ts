import fs from 'node:fs/promises'
import { readJsonIfExists, writeFileAtomic, writeJsonAtomic } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'

/** daemon.json: written (0600) only after the daemon listens; removed only by its owner. */
export interface DaemonInfo {
  pid: number
  port: number
  productVersion: string
  protocolVersion: number
  startedAt: string
  /** Authenticates control requests; never a session token. */
  controlToken: string
  /** Random per daemon: the health answer must repeat it before this file is trusted with a signal. */
  nonce?: string
  /** The daemon's process start time (clock ticks since boot, Linux), so a reused pid is never mistaken for it. */
  processStart?: string
}

// Read on every CLI call: a plain shape check keeps the fast path free of a schema library.
function isDaemonInfo(v: unknown): v is DaemonInfo {
  const o = v as Record<string, unknown> | undefined
  return (
    !!o &&
    Number.isInteger(o.pid) &&
    Number.isInteger(o.port) &&
    typeof o.productVersion === 'string' &&
    Number.isInteger(o.protocolVersion) &&
    typeof o.startedAt === 'string' &&
    typeof o.controlToken === 'string' &&
    o.controlToken.length >= 32 &&
    // daemons before control protocol 2 wrote no nonce: they can be asked to stop, never signalled
    (o.nonce === undefined || typeof o.nonce === 'string') &&
    (o.processStart === undefined || typeof o.processStart === 'string')
  )
}

export async function readDaemonInfo(paths: StatePaths): Promise<DaemonInfo | undefined> {
  try {
    const raw = await readJsonIfExists(paths.daemonJson)
    return isDaemonInfo(raw) ? raw : undefined
  } catch {
    // unreadable or not JSON: as if no daemon had written it (the next daemon writes it anew)
    return undefined
  }
}

/** daemon.json's bytes: what the daemon writes, and what it later checks the file against (daemon-info-keeper.ts). */
export const daemonInfoText = (info: DaemonInfo): string => `${JSON.stringify(info, null, 2)}\n`

export async function writeDaemonInfo(paths: StatePaths, info: DaemonInfo): Promise<void> {
  await writeFileAtomic(paths.daemonJson, daemonInfoText(info))
  await writeJsonAtomic(paths.daemonPort, { port: info.port })
}

/** Remove daemon.json only if it still describes `pid` (a successor may have replaced it). */
export async function removeDaemonInfoIfOurs(paths: StatePaths, pid: number): Promise<void> {
  const current = await readDaemonInfo(paths)
  if (current?.pid === pid) await fs.rm(paths.daemonJson, { force: true })
}

export async function readPreferredPort(paths: StatePaths): Promise<number | undefined> {
  try {
    const raw = (await readJsonIfExists(paths.daemonPort)) as { port?: unknown } | undefined
    return typeof raw?.port === 'number' && raw.port > 0 && raw.port < 65536 ? raw.port : undefined
  } catch {
    // no usable preference: the daemon takes any free port
    return undefined
  }
}
