import { ErrorCodes, TuttiError } from '../errors.js'
import type { ViewLayer } from './session-view.js'

/** What the daemon knows of one installed connector's tools: every name it serves or hides, when known. */
export interface KnownConnector {
  /** Upstream and published names of its whole table (filtered-out tools included); absent: not listed yet. */
  readonly tools?: ReadonlyArray<{ readonly upstream: string; readonly published: string }>
}

const list = (names: Iterable<string>): string => [...names].sort().join(', ') || 'none'

function unknownConnector(from: string, key: string, known: ReadonlyMap<string, KnownConnector>): TuttiError {
  return new TuttiError(
    ErrorCodes.ARGUMENT_INVALID,
    `${from}: connector "${key}" is not installed (installed: ${list(known.keys())})`,
  )
}

/**
 * A view's layers name only installed connectors, and only tools of their
 * tables where a table is known (a connector that never listed its tools,
 * say one waiting for a sign-in, has its tool names taken as given; they
 * apply once it lists). Bad input is refused before any token is issued,
 * naming the source, the name and what there is instead.
 */
export function checkViewLayers(layers: readonly ViewLayer[], known: ReadonlyMap<string, KnownConnector>): void {
  for (const layer of layers) {
    for (const key of [...(layer.connectors ?? []), ...(layer.hide ?? []), ...(layer.as ? [layer.as] : [])])
      if (!known.has(key)) throw unknownConnector(layer.from, key, known)
    for (const [key, filter] of Object.entries(layer.tools ?? {})) {
      const connector = known.get(key)
      if (!connector) throw unknownConnector(layer.from, key, known)
      if (!connector.tools) continue
      const names = new Set(connector.tools.flatMap((t) => [t.upstream, t.published]))
      for (const name of [...(filter.allow ?? []), ...(filter.hide ?? [])]) {
        if (names.has(name)) continue
        throw new TuttiError(
          ErrorCodes.ARGUMENT_INVALID,
          `${layer.from}: "${name}" is not a tool of connector "${key}" ` +
            `(its tools: ${list(connector.tools.map((t) => t.upstream))})`,
        )
      }
    }
  }
}
