import { z } from 'zod'
import { defineMessage } from './message.js'

/** Polite stop. An explicit stop revokes every session token (seed: daemon shutdown → RevokeAll). */
export const stopMessage = defineMessage(
  'stop',
  z.object({ revokeSessions: z.boolean().default(true) }).strict(),
  z.object({ stopping: z.literal(true) }),
)
