import type { Logger } from '../log/logger.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { OpenUpstream } from '../upstream/upstream-supervisor.js'
import type { ShimKeeper } from './shim-keeper.js'
import type { ToolCache } from './tool-cache.js'

/** What a connector's runtime works with, from its Reconciler. */
export interface RuntimeDeps {
  registry: ConnectorMCPRegistry
  shims: ShimKeeper
  log: Logger
  /** Runs `work` on this connector's turn of the Reconciler's per-key queue. */
  enqueue: (work: () => Promise<void>) => Promise<void>
  /** How upstreams are dialed (tests give a fake). */
  openUpstream?: OpenUpstream
  cache?: Pick<ToolCache, 'get' | 'put'>
  /** The server turned out to want an OAuth sign-in the manifest did not mention. */
  signInFound?: () => void
  /** A resource the upstream was subscribed to changed (its own URI). */
  resourceUpdated?: (uri: string) => void
}
