/**
 * Everything of an upstream's MCP surface besides its tools that a route
 * carries (issue 24): its prompts, resources and resource templates as it
 * listed them, and which of its other methods may be relayed to it. Listed
 * with the tools, committed in the same generation, cached with them.
 */
export interface UpstreamPrompt {
  name: string
  title?: string
  description?: string
  arguments?: unknown[]
  icons?: unknown[]
  _meta?: Record<string, unknown>
}

export interface UpstreamResource {
  uri: string
  name: string
  [key: string]: unknown
}

export interface UpstreamResourceTemplate {
  uriTemplate: string
  name: string
  [key: string]: unknown
}

/** What the upstream declared it serves, as far as tutti relays it. */
export interface UpstreamFeatures {
  prompts?: true
  resources?: true
  /** resources/subscribe and notifications/resources/updated. */
  subscribe?: true
  completions?: true
  logging?: true
  /** Task-augmented tools/call (2025-11-25 `capabilities.tasks.requests.tools.call`). */
  tasks?: true
  /**
   * Any of its tools may answer with a task (SEP-2663, server-directed), though none lists an `execution`: a
   * 2026-07-28 link, where that field is deleted.
   */
  anyToolTasks?: true
}

/** A prompt as the connector server serves it: `<key>_<prompt>`. */
export interface ConnectorPrompt {
  connector: string
  localName: string
  upstreamName: string
  /** The prompt as prompts/list serves it, serialized once. */
  json: string
}

/** A resource as the connector server serves it: its URI with the connector's key in it (resource-uris.ts). */
export interface ConnectorResource {
  connector: string
  uri: string
  upstreamUri: string
  json: string
}

export interface ConnectorResourceTemplate {
  connector: string
  uriTemplate: string
  json: string
}

/** The non-tool part of a route. */
export interface RouteSurface {
  prompts: readonly ConnectorPrompt[]
  resources: readonly ConnectorResource[]
  resourceTemplates: readonly ConnectorResourceTemplate[]
  features: UpstreamFeatures
  /** A print per list: equal prints mean no change a client can see of that list. */
  prints: { prompts: string; resources: string }
}

/** The upstream methods besides tools/call a route relays, with their params as the upstream takes them. */
export type RelayMethod =
  | 'prompts/get'
  | 'resources/read'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | 'completion/complete'
