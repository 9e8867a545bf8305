import { buildRoute } from '../registry/build-route.js'
import type { ConnectorMCPTool, RouteClient, UpstreamTool } from '../registry/route.js'

const NOBODY: RouteClient = { callTool: async () => ({ content: [] }) }

/** Whether an upstream's table serves exactly what is published: the same tools as clients see them. */
export function sameTable(
  published: readonly ConnectorMCPTool[],
  upstream: readonly UpstreamTool[],
  key: string,
): boolean {
  try {
    const candidate = buildRoute(key, 0, NOBODY, upstream).tools
    return (
      candidate.length === published.length &&
      candidate.every((t, i) => t.json === published[i]!.json && t.upstreamName === published[i]!.upstreamName)
    )
  } catch {
    // a table that cannot even be built is not the published one
    return false
  }
}
