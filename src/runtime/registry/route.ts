import type { CallCancel } from './call-cancel.js'
import type { CallRelay } from './call-relay.js'
import type {
  RelayMethod,
  RouteSurface,
  UpstreamFeatures,
  UpstreamPrompt,
  UpstreamResource,
  UpstreamResourceTemplate,
} from './surface.js'
import type { RouteTasks, TaskSupport } from './tasks.js'

/**
 * Routes are what the ConnectorMCPRegistry holds: one per connector, the
 * whole tool table of one generation plus the client that serves it. The
 * client is an interface: the registry never sees SDK, HTTP or process code.
 */
export interface ToolCallResult {
  content: unknown[]
  structuredContent?: Record<string, unknown>
  isError?: boolean
  [key: string]: unknown
}

/**
 * How a caller may end a tools/call early: `cancel` where the caller has
 * one (a callee that can listen to it should, and leave `signal` alone:
 * reading it makes an AbortSignal), else `signal`.
 */
export interface RouteCallOptions {
  signal?: AbortSignal
  cancel?: CallCancel
  /** The session the request is made for, and where the upstream's progress, logs and requests about it go. */
  relay?: CallRelay
}

export interface RouteClient {
  callTool(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: RouteCallOptions,
  ): Promise<ToolCallResult>
  /** The upstream's other methods (prompts/get, resources/read, …), with params as the upstream takes them. */
  relay?(method: RelayMethod, params: Record<string, unknown>, options: RouteCallOptions): Promise<RelayResult>
  /** Its tasks (registry/tasks.ts), for the tools whose `taskSupport` says they take them. */
  readonly tasks?: RouteTasks
  /** An OAuth upstream: where a caller signs in again (mcpserver/call-sign-in.ts), as `connect` would. */
  readonly signInTarget?: RouteSignInTarget
}

/** What an OAuth sign-in to a connector's server needs: its URL and headers, the grant store's root, the asks. */
export interface RouteSignInTarget {
  key: string
  serverUrl: string
  headers: Record<string, string>
  stateRoot: string
  clientId?: string
  scopes?: string[]
  resource?: string
}

/** What an upstream answered a relayed request with. */
export type RelayResult = Record<string, unknown>

/** A schema property that must also travel as an `Mcp-Param-<header>` request header. */
export interface HeaderParam {
  /** Path of `properties` keys from the schema root to the annotated property. */
  path: string[]
  header: string
  type: 'string' | 'integer' | 'boolean'
}

export interface ConnectorMCPTool {
  /** The key of the connector that serves it (what a session's view decides on). */
  connector: string
  localName: string
  upstreamName: string
  title?: string
  description?: string
  /** Kept verbatim from the upstream (or the declaration). */
  inputSchema: Record<string, unknown>
  outputSchema?: Record<string, unknown>
  annotations?: Record<string, unknown>
  headerParams: HeaderParam[]
  /** Served with `_meta["anthropic/alwaysLoad"]: true` (the connector's filter marks it; see tool-filter.ts). */
  alwaysLoad?: true
  /** The upstream's own `_meta` of the tool, an MCP App's `ui` resource URI mapped to the served one. */
  meta?: Record<string, unknown>
  /** The tool as tools/list serves it, serialized once when the route was built (within the limits). */
  json: string
  /** The upstream runs it as a task if asked (or only so): its `execution.taskSupport`, where it serves tasks. */
  taskSupport?: TaskSupport
}

export interface ConnectorMCPRoute {
  connectorKey: string
  generation: number
  client: RouteClient
  tools: ConnectorMCPTool[]
  /** What a client can see of the table (see build-route.ts); equal prints mean no visible change. */
  fingerprint: string
  /** Tools of the upstream's table the connector's filter hides: not served, not callable, but known by name. */
  hidden?: readonly HiddenTool[]
  /** Its prompts, resources and resource templates (absent: a route built from tools alone). */
  surface?: RouteSurface
  /** The manifest's `mcp.maxResultBytes`: the cap on one result of its tools (absent: the daemon's). */
  maxResultBytes?: number
}

/** A tool the connector's filter hides, by both of its names. */
export interface HiddenTool {
  readonly upstreamName: string
  readonly localName: string
}

/** The immutable binding a tools/call captures when it starts. */
export interface MCPToolBinding {
  readonly connectorKey: string
  readonly generation: number
  readonly client: RouteClient
  readonly tool: ConnectorMCPTool
  /** The route's `maxResultBytes`. */
  readonly maxResultBytes?: number
}

/** What an upstream reports: name, schema and metadata of one tool. */
export interface UpstreamTool {
  name: string
  title?: string
  description?: string
  inputSchema: unknown
  outputSchema?: unknown
  annotations?: unknown
  _meta?: unknown
  /** 2025-11-25: `{ taskSupport }`, whether a tools/call may (or must) ask for a task. */
  execution?: unknown
}

/** One listing of an upstream: what a generation is built from (registry/surface.ts has the parts besides tools). */
export interface UpstreamTable {
  tools: UpstreamTool[]
  prompts?: UpstreamPrompt[]
  resources?: UpstreamResource[]
  resourceTemplates?: UpstreamResourceTemplate[]
  features?: UpstreamFeatures
}
