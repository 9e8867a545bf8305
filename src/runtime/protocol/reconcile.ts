import { z } from 'zod'
import { connectorState } from './connector-state.js'
import { defineMessage } from './message.js'

/** Ask the daemon to bring the given connectors (all when omitted) in line with the state on disk. */
export const reconcileMessage = defineMessage(
  'reconcile',
  z.object({ keys: z.array(z.string()).optional() }).strict(),
  z.object({ connectors: z.array(connectorState) }),
)
