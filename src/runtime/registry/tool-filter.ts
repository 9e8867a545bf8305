import { closest } from '../edit-distance.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import { publishedToolNames } from './tool-naming.js'

/**
 * A connector's tool filter (issue 23), as the route is built with it: which
 * of the upstream's tools are served (`allow`, else all but `hide`) and which
 * of those are marked for clients to load in full (`alwaysLoad`). Names are
 * the upstream's; a published name (`<key>_<tool>`) matches too, so that a
 * manifest or an import may use either.
 */
export interface ConnectorToolFilter {
  readonly allow?: readonly string[]
  readonly hide?: readonly string[]
  readonly alwaysLoad?: readonly string[]
}

/** One tool's two names. */
export interface ToolNames {
  readonly upstreamName: string
  readonly localName: string
}

const names = (list: readonly string[] | undefined, tool: ToolNames): boolean =>
  !!list && (list.includes(tool.upstreamName) || list.includes(tool.localName))

/** Whether the filter lets the tool be served. */
export function toolPasses(filter: ConnectorToolFilter | undefined, tool: ToolNames): boolean {
  if (!filter) return true
  if (filter.allow && !names(filter.allow, tool)) return false
  return !names(filter.hide, tool)
}

/** Whether a served tool is marked alwaysLoad. */
export function loadsAlways(filter: ConnectorToolFilter | undefined, tool: ToolNames): boolean {
  return names(filter?.alwaysLoad, tool)
}

/** The names the filter gives that no tool of `table` has (a tool the upstream dropped since, a typo). */
export function unmatchedNames(filter: ConnectorToolFilter | undefined, table: readonly ToolNames[]): string[] {
  if (!filter) return []
  const all = [...(filter.allow ?? []), ...(filter.hide ?? []), ...(filter.alwaysLoad ?? [])]
  const known = new Set(table.flatMap((t) => [t.upstreamName, t.localName]))
  return [...new Set(all.filter((n) => !known.has(n)))].sort()
}

/** A connector's whole table by both names, from its upstream names. */
export function toolNamesOf(key: string, upstreamNames: readonly string[]): ToolNames[] {
  const published = publishedToolNames(key, upstreamNames)
  return upstreamNames.map((upstreamName) => ({ upstreamName, localName: published.get(upstreamName)! }))
}

/** How many names an error lists before it says how many more there are. */
const LISTED_NAMES = 30

/**
 * Names a user typed (upstream or published), as upstream names; an unknown one is bad input naming it, with a near
 * match or the connector's tools.
 */
export function resolveToolNames(
  key: string,
  flag: string,
  given: readonly string[],
  table: readonly ToolNames[],
): string[] {
  const out: string[] = []
  for (const name of given) {
    const tool = table.find((t) => t.upstreamName === name) ?? table.find((t) => t.localName === name)
    if (tool) {
      if (!out.includes(tool.upstreamName)) out.push(tool.upstreamName)
      continue
    }
    const typo = closest(name, [...table.map((t) => t.upstreamName), ...table.map((t) => t.localName)])
    const near = table.find((t) => t.upstreamName === typo || t.localName === typo)?.upstreamName
    const all = table.map((t) => t.upstreamName).sort()
    const listed = all.slice(0, LISTED_NAMES).join(', ')
    const more = all.length > LISTED_NAMES ? ` and ${all.length - LISTED_NAMES} more` : ''
    const hint = near ? `; did you mean "${near}"?` : all.length ? `; its tools: ${listed}${more}` : '; it has no tools'
    throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `${flag}: connector "${key}" has no tool "${name}"${hint}`)
  }
  return out
}
