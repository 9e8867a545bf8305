import type { Tool } from '@modelcontextprotocol/client'
import { headerParams } from '../registry/build-route.js'
import type { UpstreamTool } from '../registry/route.js'

/**
 * The upstream tools whose input schema declares `x-mcp-header` params
 * (SEP-2243), as the definition the SDK client's callTool takes
 * (`toolDefinition`): on a 2026-07-28 Streamable HTTP connection it then
 * sends each such argument as an `Mcp-Param-<Name>` header, encoded as the
 * spec says. The SDK finds a definition by itself only in the tools/list
 * cache of its own listTools(), which tutti does not use (it pages with its
 * own caps). The definition carries no output schema on purpose: with one,
 * the SDK would validate results, and a gateway passes them through as the
 * upstream sent them (the agent's client checks them against the schema
 * tutti lists verbatim).
 */
export class ParamHeaderTools {
  private byName = new Map<string, Tool>()

  /** The upstream's whole table, as its latest tools/list returned it. */
  listed(tools: readonly UpstreamTool[]): void {
    const byName = new Map<string, Tool>()
    for (const t of tools) {
      const schema = t.inputSchema
      if (!schema || typeof schema !== 'object' || Array.isArray(schema)) continue
      const params = headerParams(schema as Record<string, unknown>)
      // a tool with invalid declarations is not served at all (build-route drops it)
      if (Array.isArray(params) && params.length > 0)
        byName.set(t.name, { name: t.name, inputSchema: schema as Tool['inputSchema'] })
    }
    this.byName = byName
  }

  definition(upstreamName: string): Tool | undefined {
    return this.byName.get(upstreamName)
  }
}
