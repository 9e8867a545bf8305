import { buildRoute } from '../registry/build-route.js'
import type { RouteClient, UpstreamTool } from '../registry/route.js'

const NOBODY: RouteClient = { callTool: async () => ({ content: [] }) }

/**
 * Whether an upstream's table is the one published (declared, cached or listed before): the same tools as clients
 * would see them, compared whole, before any filter, so a tool the filter hides counts too.
 */
export function sameTable(published: readonly UpstreamTool[], upstream: readonly UpstreamTool[], key: string): boolean {
  try {
    const before = buildRoute(key, 0, NOBODY, published).tools
    const candidate = buildRoute(key, 0, NOBODY, upstream).tools
    return (
      candidate.length === before.length &&
      candidate.every((t, i) => t.json === before[i]!.json && t.upstreamName === before[i]!.upstreamName)
    )
  } catch {
    // a table that cannot even be built is not the published one
    return false
  }
}
