import { upstreamUri } from './resource-uris.js'
import type { ConnectorMCPTool } from './route.js'

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** A served URI as the connector's own server names it (the URI itself when it is not one of a connector's). */
export const ownUri = (uri: string): string => upstreamUri(uri)?.uri ?? uri

/**
 * A served entry (a tool, prompt, resource or template, as serialized in
 * its route) as its connector's own server serves it: under its own name,
 * its URIs as its own, for a session that sees one connector unprefixed
 * (a view's `as`). Everything else is byte for byte what the route holds.
 */
export function ownEntry(json: string, name?: string): Record<string, unknown> {
  const entry = JSON.parse(json) as Record<string, unknown>
  if (name !== undefined) entry.name = name
  if (typeof entry.uri === 'string') entry.uri = ownUri(entry.uri)
  if (typeof entry.uriTemplate === 'string') entry.uriTemplate = ownUri(entry.uriTemplate)
  const meta = entry._meta
  if (isObject(meta)) {
    const ui = meta.ui
    const own: Record<string, unknown> = { ...meta }
    if (isObject(ui) && typeof ui.resourceUri === 'string') own.ui = { ...ui, resourceUri: ownUri(ui.resourceUri) }
    if (typeof meta['ui/resourceUri'] === 'string') own['ui/resourceUri'] = ownUri(meta['ui/resourceUri'])
    entry._meta = own
  }
  return entry
}

/** A tool of an unprefixed session: its upstream's name is its served name. */
export function ownTool(tool: ConnectorMCPTool): ConnectorMCPTool {
  return { ...tool, localName: tool.upstreamName, json: JSON.stringify(ownEntry(tool.json, tool.upstreamName)) }
}
