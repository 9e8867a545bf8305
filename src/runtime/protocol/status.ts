import { z } from 'zod'
import { connectorState } from './connector-state.js'
import { defineMessage } from './message.js'

export const statusMessage = defineMessage(
  'status',
  z.object({}).strict(),
  z.object({
    pid: z.number().int(),
    port: z.number().int(),
    productVersion: z.string(),
    protocolVersion: z.number().int(),
    startedAt: z.string(),
    uptimeMs: z.number(),
    sessions: z.number().int(),
    connectors: z.array(connectorState),
  }),
)
