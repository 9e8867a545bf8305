import { createHash } from 'node:crypto'
import { publishedUri } from './resource-uris.js'
import type { UpstreamTable } from './route.js'
import type { ConnectorPrompt, ConnectorResource, ConnectorResourceTemplate, RouteSurface } from './surface.js'
import { nestsDeeperThan, TOOL_TABLE_LIMITS } from './tool-table-limits.js'
import { publishedToolNames } from './tool-naming.js'

/**
 * What one connector's prompts and resources may hold: they are part of
 * every prompts/list and resources/list of every session that sees them.
 */
export const SURFACE_LIMITS = {
  maxPrompts: 1_000,
  maxResources: 10_000,
  maxResourceTemplates: 1_000,
  /** One prompt, resource or template as served. */
  maxEntryBytes: 64 * 1024,
} as const

export interface DroppedEntry {
  kind: 'prompt' | 'resource' | 'resource template'
  name: string
  reason: string
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

const print = (entries: ReadonlyArray<{ json: string }>): string =>
  createHash('sha256')
    .update(entries.map((e) => e.json).join('\n'))
    .digest('hex')

/** Serialized within the limits, or the reason it is not served. */
function served(entry: Record<string, unknown>): string | { reason: string } {
  if (nestsDeeperThan(entry, TOOL_TABLE_LIMITS.maxSchemaDepth))
    return { reason: `nests deeper than ${TOOL_TABLE_LIMITS.maxSchemaDepth} levels` }
  const json = JSON.stringify(entry)
  return json.length > SURFACE_LIMITS.maxEntryBytes
    ? { reason: `${json.length} bytes as served, more than ${SURFACE_LIMITS.maxEntryBytes}` }
    : json
}

const byKey =
  <T extends { json: string }>(key: (t: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0

/**
 * A connector's prompts (as `<key>_<prompt>`, named by the same rule as its
 * tools), resources and resource templates (URIs mapped by resource-uris.ts),
 * serialized once. Unlike a tool table, a bad entry does not refuse the
 * generation: it is left out and reported in `dropped` (no prompt or
 * resource is needed for another to be right), and past a count limit the
 * rest are left out.
 */
export function buildSurface(key: string, table: UpstreamTable): RouteSurface & { dropped: DroppedEntry[] } {
  const dropped: DroppedEntry[] = []
  const prompts: ConnectorPrompt[] = []
  const list = (table.prompts ?? []).slice(0, SURFACE_LIMITS.maxPrompts)
  const names = publishedToolNames(
    key,
    list.flatMap((p) => (isObject(p) && typeof p.name === 'string' ? [p.name] : [])),
  )
  const seen = new Set<string>()
  for (const p of list) {
    if (!isObject(p) || typeof p.name !== 'string' || p.name === '') {
      dropped.push({ kind: 'prompt', name: '(none)', reason: 'it has no name' })
      continue
    }
    const localName = names.get(p.name)!
    const json = served({ ...p, name: localName })
    if (typeof json !== 'string' || seen.has(localName)) {
      const reason = typeof json === 'string' ? `another prompt is published as "${localName}"` : json.reason
      dropped.push({ kind: 'prompt', name: p.name, reason })
      continue
    }
    seen.add(localName)
    prompts.push({ connector: key, localName, upstreamName: p.name, json })
  }
  const resources: ConnectorResource[] = []
  const uris = new Set<string>()
  for (const r of (table.resources ?? []).slice(0, SURFACE_LIMITS.maxResources)) {
    const upstreamUri = isObject(r) && typeof r.uri === 'string' ? r.uri : undefined
    const uri = upstreamUri === undefined ? undefined : publishedUri(key, upstreamUri)
    const json = uri === undefined ? { reason: 'its URI has no scheme' } : served({ ...r, uri })
    if (typeof json !== 'string' || uris.has(uri!)) {
      const reason = typeof json === 'string' ? 'listed twice' : json.reason
      dropped.push({ kind: 'resource', name: upstreamUri ?? '(none)', reason })
      continue
    }
    uris.add(uri!)
    resources.push({ connector: key, uri: uri!, upstreamUri: upstreamUri!, json })
  }
  const resourceTemplates: ConnectorResourceTemplate[] = []
  for (const t of (table.resourceTemplates ?? []).slice(0, SURFACE_LIMITS.maxResourceTemplates)) {
    const template = isObject(t) && typeof t.uriTemplate === 'string' ? t.uriTemplate : undefined
    const uriTemplate = template === undefined ? undefined : publishedUri(key, template)
    const json =
      uriTemplate === undefined ? { reason: 'its URI template has no scheme' } : served({ ...t, uriTemplate })
    if (typeof json !== 'string') {
      dropped.push({ kind: 'resource template', name: template ?? '(none)', reason: json.reason })
      continue
    }
    resourceTemplates.push({ connector: key, uriTemplate: uriTemplate!, json })
  }
  prompts.sort(byKey((p) => p.localName))
  resources.sort(byKey((r) => r.uri))
  resourceTemplates.sort(byKey((t) => t.uriTemplate))
  return {
    prompts,
    resources,
    resourceTemplates,
    features: table.features ?? {},
    prints: { prompts: print(prompts), resources: print([...resources, ...resourceTemplates]) },
    dropped,
  }
}
