import { z } from 'zod'
import { defineMessage } from './message.js'

export const sessionRevokeMessage = defineMessage(
  'session-revoke',
  z
    .object({
      session: z.string().min(1).optional(),
      workspace: z.string().min(1).optional(),
      all: z.boolean().optional(),
    })
    .strict()
    .refine((r) => r.all || r.session !== undefined, 'name a --session, or --all'),
  z.object({ revoked: z.number().int() }),
)
