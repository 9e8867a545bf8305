import type { ToolFilterView } from '../control-protocol/connector-state.js'
import { manifestToolFilter, type ConnectorManifest } from '../manifest/schema.js'
import type { ConnectorToolFilter } from '../registry/tool-filter.js'
import type { StoredToolFilter } from '../store/tool-filter-record.js'

/**
 * The tool filter a connector's route is built with: the user's (installed.json) where it says anything, else the
 * manifest's default (`mcp.tools` object form). Tools and alwaysLoad are decided apart: `connect --tools a` keeps the
 * manifest's alwaysLoad, `--all-tools` clears the manifest's allow/hide too.
 */
export function toolFilterOf(
  manifest: ConnectorManifest | undefined,
  stored: StoredToolFilter | undefined,
): { filter?: ConnectorToolFilter; view?: ToolFilterView } {
  const fromManifest = manifestToolFilter(manifest?.mcp)
  const userTools = !!(stored?.all || stored?.allow || stored?.hide)
  const tools = userTools ? stored : fromManifest
  const alwaysLoad = stored?.alwaysLoad ?? fromManifest?.alwaysLoad
  const filter: { allow?: string[]; hide?: string[]; alwaysLoad?: string[] } = {}
  if (!stored?.all && tools?.allow) filter.allow = [...tools.allow]
  else if (!stored?.all && tools?.hide) filter.hide = [...tools.hide]
  if (alwaysLoad?.length) filter.alwaysLoad = [...alwaysLoad]
  const from: ToolFilterView['from'] = {}
  if (userTools) from.tools = 'user'
  else if (filter.allow || filter.hide) from.tools = 'manifest'
  if (stored?.alwaysLoad) from.alwaysLoad = 'user'
  else if (filter.alwaysLoad) from.alwaysLoad = 'manifest'
  if (!from.tools && !from.alwaysLoad) return {}
  // `--always-load ''` clears the manifest's list: the view says so with an empty one
  const view = { ...filter, ...(alwaysLoad && !alwaysLoad.length ? { alwaysLoad: [] } : {}), from }
  return { ...(Object.keys(filter).length ? { filter } : {}), view }
}

/** Two filters that build the same route. */
export function sameToolFilter(a: ConnectorToolFilter | undefined, b: ConnectorToolFilter | undefined): boolean {
  const norm = (f: ConnectorToolFilter | undefined) => JSON.stringify([f?.allow, f?.hide, f?.alwaysLoad])
  return norm(a) === norm(b)
}
