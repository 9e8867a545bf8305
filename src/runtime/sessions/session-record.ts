import { z } from 'zod'

/** One session as sessions.json keeps it, under its token's hash: whose it is and since when. */
export interface SessionRecord {
  workspace: string
  session: string
  provider: string
  issuedAt: string
}

export const recordSchema = z.object({
  workspace: z.string(),
  session: z.string(),
  provider: z.string(),
  issuedAt: z.string(),
})
