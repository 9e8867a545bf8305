import fs from 'node:fs/promises'
import { z } from 'zod'
import { readJsonIfExists, writeJsonAtomic } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'

/** daemon.json: written (0600) only after the daemon listens; removed only by its owner. */
const daemonInfo = z.object({
  pid: z.number().int(),
  port: z.number().int(),
  productVersion: z.string(),
  protocolVersion: z.number().int(),
  startedAt: z.string(),
  /** Authenticates control requests; never a session token. */
  controlToken: z.string().min(32),
})
export type DaemonInfo = z.infer<typeof daemonInfo>

export async function readDaemonInfo(paths: StatePaths): Promise<DaemonInfo | undefined> {
  try {
    const parsed = daemonInfo.safeParse(await readJsonIfExists(paths.daemonJson))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

export async function writeDaemonInfo(paths: StatePaths, info: DaemonInfo): Promise<void> {
  await writeJsonAtomic(paths.daemonJson, info)
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
    return undefined
  }
}
