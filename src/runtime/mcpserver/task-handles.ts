import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { CONNECTOR_KEY } from '../connector-key.js'

/** What a handle names: the connector, its upstream connection's epoch, and the upstream's own task id. */
export interface TaskRef {
  readonly connector: string
  readonly epoch: string
  readonly taskId: string
}

/** Bytes of the MAC a handle carries: 128 bits, beyond guessing. */
const MAC_BYTES = 16
/** An upstream task id longer than this gets no handle (SDKs mint UUIDs or 32 hex chars). */
export const MAX_UPSTREAM_TASK_ID = 512
/** Longer than any handle this mints: refused before any work. */
const MAX_HANDLE = 64 + Math.ceil((MAX_UPSTREAM_TASK_ID * 4 * 4) / 3)

/**
 * The task ids the connector server hands out. Every upstream's tasks
 * share one id space there, and one upstream connection serves every
 * session, so an upstream's own id names neither the connector nor the
 * caller. A handle is `<key>.<epoch>.<upstream id, base64url>.<MAC>`:
 * read back without a table (the connector, the connection, the upstream's
 * id), and bound to the session (token hash) that created the task by an
 * HMAC under a secret that never leaves the daemon. Another session's
 * handle, or a forged one, does not open: its task is unknown to that
 * session, exactly as an id that never existed. The secret is the
 * daemon's own, new at each start (stdio upstreams' tasks end with the
 * daemon anyway); a handle of an earlier daemon is unknown.
 */
export class TaskHandles {
  constructor(private readonly secret: Buffer = randomBytes(32)) {}

  mint(session: string, ref: TaskRef): string {
    const body = `${ref.connector}.${ref.epoch}.${Buffer.from(ref.taskId, 'utf8').toString('base64url')}`
    return `${body}.${this.mac(session, body).toString('base64url')}`
  }

  /** What `handle` names, if `session` minted it; else undefined. */
  open(session: string, handle: string): TaskRef | undefined {
    if (handle.length > MAX_HANDLE) return undefined
    const parts = handle.split('.')
    if (parts.length !== 4) return undefined
    const [connector, epoch, id, mac] = parts as [string, string, string, string]
    if (!CONNECTOR_KEY.test(connector)) return undefined
    const given = Buffer.from(mac, 'base64url')
    const wanted = this.mac(session, `${connector}.${epoch}.${id}`)
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return undefined
    return { connector, epoch, taskId: Buffer.from(id, 'base64url').toString('utf8') }
  }

  private mac(session: string, body: string): Buffer {
    return createHmac('sha256', this.secret).update(session).update('\0').update(body).digest().subarray(0, MAC_BYTES)
  }
}
