import type { UpstreamTool } from './route.js'

/**
 * Declared tool tables (manifest `mcp.tools`) against what the upstream
 * really lists. Used when a lazy connector's upstream first starts, and by
 * `tutti daemon doctor`.
 */
export interface ToolDifference {
  tool: string
  problem: 'declared but not listed by the upstream' | 'listed by the upstream but not declared' | 'fields differ'
  fields?: string[]
}

const COMPARED = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const

/** JSON with sorted object keys, so key order never counts as a difference. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'undefined'
}

export function compareToolTables(
  declared: readonly UpstreamTool[],
  upstream: readonly UpstreamTool[],
): ToolDifference[] {
  const out: ToolDifference[] = []
  const up = new Map(upstream.map((t) => [t.name, t]))
  const decl = new Map(declared.map((t) => [t.name, t]))
  for (const d of declared) {
    const u = up.get(d.name)
    if (!u) {
      out.push({ tool: d.name, problem: 'declared but not listed by the upstream' })
      continue
    }
    const fields = COMPARED.filter((f) => canonical(d[f]) !== canonical(u[f]))
    if (fields.length) out.push({ tool: d.name, problem: 'fields differ', fields: [...fields] })
  }
  for (const u of upstream)
    if (!decl.has(u.name)) out.push({ tool: u.name, problem: 'listed by the upstream but not declared' })
  return out.sort((a, b) => a.tool.localeCompare(b.tool))
}

export function describeDifferences(diffs: readonly ToolDifference[]): string {
  return diffs.map((d) => `${d.tool}: ${d.problem}${d.fields ? ` (${d.fields.join(', ')})` : ''}`).join('; ')
}
