import { buildRoute } from '../registry/build-route.js'
import type { RouteClient } from '../registry/route.js'
import type { UpstreamTable } from '../registry/route.js'

const NOBODY: RouteClient = { callTool: async () => ({ content: [] }) }

/**
 * Whether an upstream's table is the one published (declared, cached or listed before): the same tools as clients
 * would see them, compared whole, before any filter, so a tool the filter hides counts too; and the same prompts,
 * resources and templates, and the same features.
 */
export function sameTable(published: UpstreamTable, upstream: UpstreamTable, key: string): boolean {
  try {
    const before = buildRoute(key, 0, NOBODY, published)
    const candidate = buildRoute(key, 0, NOBODY, upstream)
    const surfaces = [before.surface!, candidate.surface!]
    return (
      candidate.tools.length === before.tools.length &&
      candidate.tools.every(
        (t, i) =>
          t.json === before.tools[i]!.json &&
          t.upstreamName === before.tools[i]!.upstreamName &&
          // not served, but it decides how a call is made (registry/tasks.ts)
          t.taskSupport === before.tools[i]!.taskSupport,
      ) &&
      JSON.stringify(surfaces[0]!.prints) === JSON.stringify(surfaces[1]!.prints) &&
      JSON.stringify(surfaces[0]!.features) === JSON.stringify(surfaces[1]!.features)
    )
  } catch {
    // a table that cannot even be built is not the published one
    return false
  }
}
