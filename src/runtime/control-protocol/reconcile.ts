import { z } from 'zod'
import { CONNECTOR_KEY, CONNECTOR_KEY_RULE } from '../connector-key.js'
import { connectorState } from './connector-state.js'
import { defineMessage } from './message.js'

/**
 * Ask the daemon to bring the given connectors (all when omitted) in line
 * with the state on disk. Without `waitMs` the answer comes when the work is
 * done. With it, the answer comes once every connector has an outcome
 * (ready, failed, needs-auth) or after `waitMs`, whichever is first; 0
 * answers at once while the work goes on.
 */
export const reconcileMessage = defineMessage(
  'reconcile',
  z
    .object({
      keys: z.array(z.string().regex(CONNECTOR_KEY, CONNECTOR_KEY_RULE)).max(10_000).optional(),
      waitMs: z.number().int().min(0).max(3_600_000).optional(),
    })
    .strict(),
  z.object({ connectors: z.array(connectorState) }),
)
