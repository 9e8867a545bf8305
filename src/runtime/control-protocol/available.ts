import { z } from 'zod'
import { SERVER_NAME } from '../names.js'
import { interfaceStatus } from './connector-state.js'
import { defineMessage } from './message.js'

/**
 * The public discovery shape (DESIGN §11). It carries no URL, port, token,
 * header, credential, upstream endpoint or release path, by construction:
 * every object is strict, so nothing else can ride along.
 */
const skillSummary = z.strictObject({ name: z.string(), title: z.string().optional(), description: z.string() })
/** Why an interface is not ready: short, with credentials and state-dir paths removed. */
const reason = z.string().max(500).optional()
/**
 * What the interface costs the model's context: its tools, and the bytes of their definitions (never the definitions).
 */
const mcpInterface = z.strictObject({
  kind: z.literal('mcp'),
  serverName: z.literal(SERVER_NAME),
  toolPrefix: z.string(),
  status: interfaceStatus,
  reason,
  tools: z.number().int().nonnegative().optional(),
  schemaBytes: z.number().int().nonnegative().optional(),
  /** Tools of the connector its tool filter hides (not served, not counted above); absent: none. */
  hiddenTools: z.number().int().positive().optional(),
})
const cliInterface = z.strictObject({ kind: z.literal('cli'), command: z.string(), status: interfaceStatus, reason })

export const availableConnector = z.strictObject({
  key: z.string(),
  name: z.string(),
  description: z.string(),
  skills: z.array(skillSummary),
  interfaces: z.array(z.discriminatedUnion('kind', [mcpInterface, cliInterface])),
})
export type AvailableConnector = z.infer<typeof availableConnector>

/** Asked with a session's token: what that session sees, and what its tools cost the model's context. */
const sessionView = z.strictObject({
  narrowed: z.boolean(),
  context: z.strictObject({ tools: z.number().int(), bytes: z.number().int(), tokens: z.number().int() }),
})

export const availableResult = z.strictObject({
  connectors: z.array(availableConnector),
  session: sessionView.optional(),
})
export type AvailableResult = z.infer<typeof availableResult>

export const availableMessage = defineMessage(
  'available',
  /** `token`: the caller runs inside a session (TUTTI_CONNECTOR_TOKEN), and sees what that session sees. */
  z.object({ token: z.string().max(256).optional() }).strict(),
  availableResult,
)
