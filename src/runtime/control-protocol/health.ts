import { z } from 'zod'
import { defineMessage } from './message.js'

/** The version handshake: a CLI reuses a daemon only if both versions match. */
export const healthMessage = defineMessage(
  'health',
  z.object({}).strict(),
  z.object({
    pid: z.number().int(),
    productVersion: z.string(),
    protocolVersion: z.number().int(),
    stateDir: z.string(),
    startedAt: z.string(),
    /** Must equal daemon.json's: proof that the answering daemon is the one the file describes. */
    nonce: z.string().optional(),
    processStart: z.string().optional(),
  }),
)
