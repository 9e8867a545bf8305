import { createHash } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import { servedToolMeta } from './app-meta.js'
import { buildSurface, type DroppedEntry } from './build-surface.js'
import { toMcpTool } from './mcp-tool.js'
import type { UpstreamTable } from './route.js'
import type {
  ConnectorMCPRoute,
  ConnectorMCPTool,
  HeaderParam,
  HiddenTool,
  RouteClient,
  UpstreamTool,
} from './route.js'
import { loadsAlways, toolPasses, type ConnectorToolFilter } from './tool-filter.js'
import { nestsDeeperThan, TOOL_TABLE_LIMITS } from './tool-table-limits.js'
import { publishedToolNames } from './tool-naming.js'
import { taskSupportOf } from './tasks.js'

const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const HEADER_TYPES = new Set(['string', 'integer', 'boolean'])

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v)
}

function invalid(key: string, message: string): TuttiError {
  return new TuttiError(ErrorCodes.ROUTE_INVALID, `connector "${key}": ${message}`)
}

/**
 * `x-mcp-header` declarations (MCP 2026-07-28, SEP-2243): a non-empty
 * header token, unique case-insensitively, on a string/integer/boolean
 * property reachable from the root through `properties` keys only. Any
 * other placement makes the tool invalid. Returns the reason, or the params.
 */
export function headerParams(schema: Record<string, unknown>): HeaderParam[] | string {
  const out: HeaderParam[] = []
  const seen = new Set<string>()
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (Array.isArray(node)) {
      for (const item of node) {
        const err = visit(item, path, false)
        if (err) return err
      }
      return undefined
    }
    if (!isObject(node)) return undefined
    if ('x-mcp-header' in node) {
      const where = path.join('.') || '(root)'
      if (!reachable || path.length === 0)
        return `x-mcp-header on "${where}" is not reachable from the root through "properties" alone`
      const header = node['x-mcp-header']
      if (typeof header !== 'string' || !HEADER_TOKEN.test(header))
        return `x-mcp-header on "${where}" is not a valid header name token`
      if (typeof node.type !== 'string' || !HEADER_TYPES.has(node.type))
        return `x-mcp-header on "${where}" needs a string, integer or boolean property`
      if (seen.has(header.toLowerCase())) return `x-mcp-header "${header}" is declared twice`
      seen.add(header.toLowerCase())
      out.push({ path, header, type: node.type as HeaderParam['type'] })
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && isObject(v)) {
        for (const [prop, def] of Object.entries(v)) {
          const err = visit(def, [...path, prop], reachable)
          if (err) return err
        }
      } else if (k !== 'x-mcp-header' && (isObject(v) || Array.isArray(v))) {
        const err = visit(v, path, false)
        if (err) return err
      }
    }
    return undefined
  }
  return visit(schema, [], true) ?? out
}

export interface DroppedTool {
  name: string
  reason: string
}

/**
 * Validate an upstream's tool table and turn it into a route. A problem that
 * makes the table ambiguous (a schema root that is not an object, two tools
 * with one local name) rejects the whole generation, keeping the previous
 * one. A tool with an invalid `x-mcp-header` is dropped, as conforming HTTP
 * clients must drop it anyway, and reported in `dropped`.
 *
 * The connector's `filter` is applied here, so a tool it hides is simply not
 * in the route: neither listed nor callable on any serving path. It is kept
 * by name in `hidden`, and is not validated (hiding a broken tool is a way to
 * serve the rest). Names are given over the whole table, so hiding one tool
 * never renames another.
 */
export function buildRoute(
  key: string,
  generation: number,
  client: RouteClient,
  listed: readonly UpstreamTool[] | UpstreamTable,
  filter?: ConnectorToolFilter,
): ConnectorMCPRoute & { dropped: DroppedTool[]; droppedEntries: DroppedEntry[] } {
  const table: UpstreamTable = isTable(listed) ? listed : { tools: [...listed] }
  const upstream = table.tools
  const byLocal = new Map<string, string>()
  const tools: ConnectorMCPTool[] = []
  const dropped: DroppedTool[] = []
  const hidden: HiddenTool[] = []
  if (upstream.length > TOOL_TABLE_LIMITS.maxTools)
    throw invalid(key, `${upstream.length} tools, more than the limit of ${TOOL_TABLE_LIMITS.maxTools}`)
  let tableBytes = 0
  const published = publishedToolNames(
    key,
    upstream.flatMap((t) => (typeof t.name === 'string' ? [t.name] : [])),
  )
  for (const t of upstream) {
    if (typeof t.name !== 'string' || t.name === '') throw invalid(key, 'a tool has no name')
    const names = { upstreamName: t.name, localName: published.get(t.name)! }
    if (!toolPasses(filter, names)) {
      hidden.push(names)
      continue
    }
    // checked before anything recursive (the x-mcp-header scan, serialization) touches the schema
    const deep = toolLimitProblem(t)
    if (deep) throw invalid(key, `tool "${t.name}": ${deep}`)
    if (!isObject(t.inputSchema) || t.inputSchema.type !== 'object') {
      throw invalid(key, `tool "${t.name}": the root of inputSchema must be type "object"`)
    }
    if (t.outputSchema !== undefined && (!isObject(t.outputSchema) || t.outputSchema.type !== 'object')) {
      throw invalid(key, `tool "${t.name}": the root of outputSchema must be type "object"`)
    }
    const { localName } = names
    const clash = byLocal.get(localName)
    if (clash !== undefined) {
      throw invalid(key, `tools "${clash}" and "${t.name}" both become "${localName}"; the new tool table was rejected`)
    }
    byLocal.set(localName, t.name)
    const params = headerParams(t.inputSchema)
    if (typeof params === 'string') {
      dropped.push({ name: t.name, reason: params })
      continue
    }
    const tool: Omit<ConnectorMCPTool, 'json'> = {
      connector: key,
      localName,
      upstreamName: t.name,
      inputSchema: t.inputSchema,
      headerParams: params,
    }
    if (t.title !== undefined) tool.title = t.title
    if (t.description !== undefined) tool.description = t.description
    if (isObject(t.outputSchema)) tool.outputSchema = t.outputSchema
    if (isObject(t.annotations)) tool.annotations = t.annotations
    if (isObject(t._meta)) tool.meta = servedToolMeta(key, t._meta)
    if (loadsAlways(filter, names)) tool.alwaysLoad = true
    // not served in tools/list (2025-06-18 has no `execution`, 2026-07-28 deleted it): it decides how a call is made
    const features = table.features
    const taskSupport = features?.tasks
      ? (taskSupportOf(t.execution) ?? (features.anyToolTasks ? 'optional' : undefined))
      : undefined
    if (taskSupport) tool.taskSupport = taskSupport
    const json = JSON.stringify(toMcpTool(tool))
    if (json.length > TOOL_TABLE_LIMITS.maxToolBytes)
      throw invalid(
        key,
        `tool "${t.name}": ${json.length} bytes as served, more than the limit of ${TOOL_TABLE_LIMITS.maxToolBytes}`,
      )
    tableBytes += json.length
    if (tableBytes > TOOL_TABLE_LIMITS.maxTableBytes)
      throw invalid(key, `the tool table is more than ${TOOL_TABLE_LIMITS.maxTableBytes} bytes as served`)
    tools.push({ ...tool, json })
  }
  tools.sort((a, b) => (a.localName < b.localName ? -1 : a.localName > b.localName ? 1 : 0))
  const fingerprint = createHash('sha256')
    .update(tools.map((t) => t.json).join('\n'))
    .digest('hex')
  hidden.sort((a, b) => (a.localName < b.localName ? -1 : a.localName > b.localName ? 1 : 0))
  const { dropped: droppedEntries, ...surface } = buildSurface(key, table)
  return { connectorKey: key, generation, client, tools, fingerprint, dropped, hidden, surface, droppedEntries }
}

const isTable = (v: readonly UpstreamTool[] | UpstreamTable): v is UpstreamTable => !Array.isArray(v)

/** Why a tool's data breaks a limit before it can even be serialized, or undefined. */
export function toolLimitProblem(
  t: Pick<UpstreamTool, 'inputSchema' | 'outputSchema' | 'annotations' | '_meta'>,
): string | undefined {
  const max = TOOL_TABLE_LIMITS.maxSchemaDepth
  for (const field of ['inputSchema', 'outputSchema', 'annotations', '_meta'] as const) {
    if (nestsDeeperThan(t[field], max)) return `${field} nests deeper than ${max} levels`
  }
  return undefined
}
