import { z } from 'zod'
import { CONNECTOR_KEY, CONNECTOR_KEY_RULE } from '../connector-key.js'
import { defineMessage } from './message.js'

/**
 * The whole tool table the daemon knows of one connector, before any filter
 * hid a tool: what a tool filter's names are checked against. `served`: the
 * table of its committed route (the hidden tools included); `cache`: its
 * last tools/list (it runs no route now: disabled, needs-auth); `declared`:
 * its manifest's declaration; `none`: no table is known yet.
 */
export const toolTableMessage = defineMessage(
  'tool-table',
  z.object({ key: z.string().regex(CONNECTOR_KEY, CONNECTOR_KEY_RULE) }).strict(),
  z.object({
    key: z.string(),
    source: z.enum(['served', 'cache', 'declared', 'none']),
    /** Upstream names. */
    tools: z.array(z.string()),
  }),
)
