import { z } from 'zod'
import { CONNECTOR_KEY } from '../connector-key.js'

/**
 * One layer of a session's view, as the prepare message carries it and
 * sessions.json keeps it (sessions/session-view.ts compiles the layers).
 */
const key = z.string().regex(CONNECTOR_KEY, 'is not a connector key')
const toolNames = z.array(z.string().min(1).max(128)).max(1000)

export const toolFilterSchema = z.strictObject({ allow: toolNames.optional(), hide: toolNames.optional() })
export type ToolFilter = z.infer<typeof toolFilterSchema>

export const viewLayerSchema = z.strictObject({
  /** Where the layer came from, for `daemon status` and messages: "flags", "project file <path>", … */
  from: z.string().min(1).max(1024),
  connectors: z.array(key).max(1000).optional(),
  hide: z.array(key).max(1000).optional(),
  tools: z.record(key, toolFilterSchema).optional(),
  /** The session sees this one connector under its server's own names: tools, prompts and resource URIs. */
  as: key.optional(),
})
export type ViewLayer = z.infer<typeof viewLayerSchema>
