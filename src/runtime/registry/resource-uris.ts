import { CONNECTOR_KEY } from '../connector-key.js'

/**
 * The one rule that maps an upstream's resource URIs (and URI templates)
 * to the ones the connector server serves, and back: the connector's key
 * goes right after the scheme and its `//`, as the first segment, with
 * everything else kept as it was:
 *
 *   demo://resource/static/1  of `demo`        →  demo://demo/resource/static/1
 *   file:///srv/notes.md      of `files`       →  file://files//srv/notes.md
 *   ui://weather/card.html    of `wx`          →  ui://wx/weather/card.html
 *   urn:isbn:0451450523       of `books`       →  urn:books/isbn:0451450523
 *
 * The scheme is kept (a host that renders `ui://` or opens `file://` still
 * recognizes it; hosts break on rewritten schemes such as `x+ui://`), the
 * mapping is reversible by parsing alone (a key is [a-z][a-z0-9-]{0,23} and
 * ends at the first "/"), and two connectors' URIs can never collide. Skill
 * URIs (`skill://<key>/<skill>/…`, served by tutti itself) follow the same
 * shape. A URI without a scheme is not a URI a client can name: it is not
 * served.
 */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(\/\/)?/
const KEY_SEGMENT = new RegExp(`^(${CONNECTOR_KEY.source.slice(1, -1)})/`)

/** The URI (or URI template) `key`'s upstream calls `uri`, as the connector server serves it; undefined: none. */
export function publishedUri(key: string, uri: string): string | undefined {
  const scheme = SCHEME.exec(uri)
  return scheme ? `${scheme[0]}${key}/${uri.slice(scheme[0].length)}` : undefined
}

/** Which connector a served URI belongs to, and what its upstream calls it; undefined: no connector's. */
export function upstreamUri(uri: string): { key: string; uri: string } | undefined {
  const scheme = SCHEME.exec(uri)
  if (!scheme) return undefined
  const rest = uri.slice(scheme[0].length)
  const key = KEY_SEGMENT.exec(rest)
  return key ? { key: key[1]!, uri: `${scheme[0]}${rest.slice(key[0].length)}` } : undefined
}
