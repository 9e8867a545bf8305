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
    /** Each live session, and how many MCP requests arrived with its token since the daemon started. */
    sessionActivity: z.array(
      z.object({
        workspace: z.string(),
        session: z.string(),
        provider: z.string(),
        requests: z.number().int(),
        lastSeenAt: z.string().optional(),
        /** Where the session's view comes from; absent: it sees every connector. */
        view: z.array(z.string()).optional(),
        context: z.object({ tools: z.number().int(), bytes: z.number().int(), tokens: z.number().int() }).optional(),
      }),
    ),
    connectors: z.array(connectorState),
  }),
)
