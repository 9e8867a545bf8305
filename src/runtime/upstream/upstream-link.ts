import type { RelayResult, RouteCallOptions, RouteClient, UpstreamTool } from '../registry/route.js'
import type { UpstreamTable } from '../registry/route.js'
import type { RelayMethod } from '../registry/surface.js'
import { UpstreamConnection, type StderrLines } from './upstream-connection.js'
import type { UpstreamEras } from './upstream-eras.js'
import type { UpstreamSpec } from './upstream-spec.js'

/** One live session with the upstream, as the supervisor uses it (UpstreamConnection in production). */
export interface UpstreamLink extends RouteClient {
  readonly pid: number | undefined
  /** The MCP revision the link speaks (upstream-connect.ts chose it). */
  readonly protocolVersion?: string | undefined
  readonly closed: boolean
  listTools(): Promise<UpstreamTool[]>
  /** The tools and what else it declared; `problems`: lists that failed (served empty). */
  listTable(): Promise<{ table: UpstreamTable; problems: string[] }>
  relay(method: RelayMethod, params: Record<string, unknown>, options: RouteCallOptions): Promise<RelayResult>
  onClosed(listener: (reason: string) => void): void
  /** Any of its lists changed. */
  onToolsChanged(listener: () => void): void
  onResourceUpdated(listener: (uri: string) => void): void
  close(drainMs?: number): Promise<void>
}

/**
 * `onStderrLine`: where a stdio server's stderr goes, line by line (the connector's log); `eras`: what earlier starts
 * found out about a stdio server's era.
 */
export type OpenUpstream = (
  spec: UpstreamSpec,
  signal: AbortSignal,
  onStderrLine?: StderrLines,
  eras?: UpstreamEras,
) => Promise<UpstreamLink>

export const openUpstreamConnection: OpenUpstream = (spec, signal, onStderrLine, eras) =>
  UpstreamConnection.open(spec, signal, onStderrLine, eras)

/** What a supervisor (upstream-supervisor.ts) reports of its upstream. */
export interface SupervisorEvents {
  /** The upstream listed its table (tools, prompts, resources): after a start, and after its own list_changed. */
  toolsListed(table: UpstreamTable, why: 'started' | 'changed'): void
  /** A resource it was subscribed to changed (its own URI). */
  resourceUpdated?(uri: string): void
  /** A start failed or the upstream went away; `retryAt` when a restart is scheduled. */
  failed(reason: string, failures: number, retryAt?: string): void
  /** A lazy upstream was stopped (idle, or it exited); the next call starts it again. */
  stopped(reason: string): void
  /** The server wants an OAuth sign-in no grant answers: nothing is retried, only `connect` helps. */
  signInRequired(reason: string): void
}
