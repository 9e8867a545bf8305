import type { ConnectorMCPRoute, RouteClient } from '../registry/route.js'
import type { UpstreamTable } from '../registry/route.js'
import { toolNamesOf, unmatchedNames, type ConnectorToolFilter } from '../registry/tool-filter.js'

/**
 * What a connector's runtime last committed: the generation and the size of
 * its table for status, and the whole table behind it (before its filter
 * hid anything) with the client that serves it. A new filter builds that
 * same table again, with no upstream start; the tool names a user's filter
 * is checked against are that table's.
 */
export class ServedTable {
  generation = 0
  tools = 0
  bytes = 0
  hidden = 0
  /** Names the filter gives that the table lacks (a tool the upstream no longer has). */
  unmatched: string[] = []
  /** The whole table last committed, and its client. */
  table?: { table: UpstreamTable; client: RouteClient }

  /** `route` was committed, built from `table` of `client` with `filter`; the filter's names the table lacks. */
  committed(
    route: ConnectorMCPRoute,
    table: UpstreamTable,
    client: RouteClient,
    filter: ConnectorToolFilter | undefined,
  ): string[] | undefined {
    this.generation = route.generation
    this.tools = route.tools.length
    this.bytes = route.tools.reduce((n, t) => n + Buffer.byteLength(t.json), 0)
    this.hidden = route.hidden?.length ?? 0
    this.table = { table, client }
    this.unmatched = unmatchedNames(
      filter,
      toolNamesOf(
        route.connectorKey,
        table.tools.map((t) => t.name),
      ),
    )
    return this.unmatched.length ? this.unmatched : undefined
  }

  /** No generation serves (the generation stays: it fences the next). */
  withdrawn(): void {
    this.tools = 0
    this.bytes = 0
    this.hidden = 0
  }
}
