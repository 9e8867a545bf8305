import { publishedUri } from './resource-uris.js'

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * A tool's `_meta` as the connector server serves it. An MCP App (SEP-1865)
 * names the `ui://` resource that renders the tool in `_meta.ui.resourceUri`
 * (and, in the extension's first drafts, `_meta["ui/resourceUri"]`): that
 * URI is mapped by the same rule as the resource itself (resource-uris.ts),
 * so the host finds the page the connector server serves. Everything else
 * is kept as the upstream sent it.
 */
export function servedToolMeta(key: string, meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...meta }
  const ui = meta.ui
  if (isObject(ui) && typeof ui.resourceUri === 'string')
    out.ui = { ...ui, resourceUri: publishedUri(key, ui.resourceUri) ?? ui.resourceUri }
  const flat = meta['ui/resourceUri']
  if (typeof flat === 'string') out['ui/resourceUri'] = publishedUri(key, flat) ?? flat
  return out
}
