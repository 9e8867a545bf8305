import { z } from 'zod'
import { viewLayerSchema, type ViewLayer } from './session-view.js'

/** A process that owns a session (`session exec`, `session bridge`): its token goes when the process is proven gone. */
export interface SessionOwner {
  pid: number
  /** The process's start time (proc/pid.ts), so that a reused pid is never taken for the owner. */
  start: string
  /** Its pid namespace (proc/pid.ts): a daemon in another one cannot tell anything from the pid. */
  pidNamespace?: string
}

/** One session as sessions.json keeps it, under its token's hash: whose it is, since when, and what it sees. */
export interface SessionRecord {
  workspace: string
  session: string
  provider: string
  issuedAt: string
  /** ISO time after which the token no longer verifies; absent: it lives until revoked. */
  expiresAt?: string
  owner?: SessionOwner
  /** The layers of the session's view (session-view.ts); absent: it sees every active connector. */
  view?: ViewLayer[]
}

export const recordSchema = z.object({
  workspace: z.string(),
  session: z.string(),
  provider: z.string(),
  issuedAt: z.string(),
  expiresAt: z.string().optional(),
  owner: z
    .object({ pid: z.number().int().positive(), start: z.string(), pidNamespace: z.string().optional() })
    .optional(),
  view: z.array(viewLayerSchema).optional(),
})
