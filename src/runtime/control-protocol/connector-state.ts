import { z } from 'zod'

/**
 * Run conditions of a connector interface, and the user's switch: `disabled` (`tutti connector disable`) is
 * installed with everything kept, serving nothing until `tutti connector enable`.
 */
export const interfaceStatus = z.enum(['ready', 'starting', 'needs-auth', 'failed', 'disabled'])
export type InterfaceStatus = z.infer<typeof interfaceStatus>

const toolNames = z.array(z.string())
const filterSource = z.enum(['user', 'manifest'])
/**
 * A connector's tool filter in effect (upstream names): which tools are served, which are marked alwaysLoad, who set
 * each (`user`: `connect --tools …`; `manifest`: its mcp.tools), and the names that match no tool of its table.
 */
export const toolFilterView = z.object({
  allow: toolNames.optional(),
  hide: toolNames.optional(),
  alwaysLoad: toolNames.optional(),
  from: z.object({ tools: filterSource.optional(), alwaysLoad: filterSource.optional() }),
  unmatched: toolNames.optional(),
})
export type ToolFilterView = z.infer<typeof toolFilterView>

export const connectorState = z.object({
  key: z.string(),
  version: z.string(),
  status: interfaceStatus,
  /** Current route generation (0 when none was ever committed). */
  generation: z.number().int(),
  tools: z.number().int(),
  /** Tools of its table the filter hides (not served). */
  hiddenTools: z.number().int().optional(),
  /** `tutti connector disable`: nothing of it is served until `enable` (the status says `disabled` too). */
  disabled: z.literal(true).optional(),
  toolFilter: toolFilterView.optional(),
  activation: z.enum(['eager', 'lazy', 'cached']).optional(),
  upstream: z.enum(['running', 'stopped', 'restarting', 'none']).optional(),
  /** Pid of the running stdio upstream (its process group leader). */
  pid: z.number().int().optional(),
  /** The MCP revision tutti speaks to the running upstream: 2026-07-28 where it does, else a 2025 one. */
  protocolVersion: z.string().optional(),
  /** Lazy connectors: how often the upstream was started. */
  starts: z.number().int().optional(),
  error: z.string().optional(),
  /** Why the MCP interface is not ready (or, ready, which release serves), short and redacted. */
  reason: z.string().optional(),
  /** Ready because the previous release serves on: the version that failed to start, and why. */
  failedChange: z.object({ servingVersion: z.string(), version: z.string(), reason: z.string() }).optional(),
  /** The stdio command as resolved at install or connect (absolute). */
  command: z.string().optional(),
  /** Declared settings with their values (never credentials). */
  settings: z.record(z.string(), z.string()).optional(),
  /** Restarts of the upstream after it exited. */
  restarts: z.number().int().optional(),
  /** When the next restart attempt is due, while one is scheduled. */
  nextRetryAt: z.string().optional(),
  /** The last failure, kept after a later success. */
  lastError: z.string().optional(),
  /** Status of the CLI shim, for connectors with a CLI. */
  cli: interfaceStatus.optional(),
  cliReason: z.string().optional(),
  lastChange: z.string().optional(),
})
export type ConnectorState = z.infer<typeof connectorState>
