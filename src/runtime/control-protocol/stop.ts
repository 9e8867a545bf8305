import { z } from 'zod'
import { defineMessage } from './message.js'

/**
 * Polite stop. Session tokens outlive it (issue 23: running agents reconnect
 * to the next daemon) unless `revokeSessions` asks to revoke every one.
 */
export const stopMessage = defineMessage(
  'stop',
  z.object({ revokeSessions: z.boolean().default(false) }).strict(),
  z.object({ stopping: z.literal(true) }),
)
