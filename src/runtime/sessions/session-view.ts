import { createHash } from 'node:crypto'
import type { ToolFilter, ViewLayer } from '../control-protocol/view-layer.js'

export { toolFilterSchema, viewLayerSchema, type ToolFilter, type ViewLayer } from '../control-protocol/view-layer.js'

/** The parts of a served tool a view decides on. */
export interface ViewedTool {
  readonly connector: string
  readonly upstreamName: string
  readonly localName: string
}

function toolPasses(filter: ToolFilter | undefined, tool: ViewedTool): boolean {
  if (!filter) return true
  const named = (names: readonly string[]) => names.includes(tool.upstreamName) || names.includes(tool.localName)
  if (filter.allow && !named(filter.allow)) return false
  return !(filter.hide && named(filter.hide))
}

const sorted = (names: readonly string[] | undefined) => (names ? [...new Set(names)].sort() : undefined)

/** A layer's narrowing as one string that does not depend on the order anything was given in. */
function canonical(layer: ViewLayer): string {
  const tools = Object.entries(layer.tools ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, f]) => [key, sorted(f.allow), sorted(f.hide)])
  return JSON.stringify({
    ...(layer.as ? { as: layer.as } : {}),
    ...(layer.connectors ? { connectors: sorted(layer.connectors) } : {}),
    ...(layer.hide ? { hide: sorted(layer.hide) } : {}),
    ...(tools.length ? { tools } : {}),
  })
}

/**
 * What one session sees of the connectors (issue 23): the layers of its
 * view, each from one source (`session prepare --connectors`, a project
 * file, the session it was prepared in). A connector or tool is visible
 * only when every layer lets it through, so a layer added can only narrow:
 * a nested session starts from its parent's layers and never widens them.
 * The token carries the view (the session's record), never the connection.
 *
 * A whole view (no layer narrows anything) is what the hot paths test for
 * (`whole`) and skip. Filtered lists are kept per list (by identity), so a
 * hundred sessions with one view filter a registry snapshot once.
 */
export class SessionView {
  static readonly WHOLE = new SessionView([])

  /** Equal for views that see the same; '' for the whole view. */
  readonly print: string
  /**
   * The one connector the session sees under its server's own names (`--as`); absent: every connector it sees is
   * served as `<key>_…`. Layers that ask for two different ones see nothing.
   */
  readonly unprefixed?: string
  private readonly conflicting: boolean
  private readonly filtered = new WeakMap<readonly ViewedTool[], readonly ViewedTool[]>()

  private constructor(readonly layers: readonly ViewLayer[]) {
    // what narrows, in one order: `--connectors a,b` and `b,a`, or two layers either way round, see the same
    const narrowing = layers
      .map(canonical)
      .filter((l) => l !== '{}')
      .sort()
    this.print = narrowing.length ? createHash('sha256').update(narrowing.join('\n')).digest('hex') : ''
    const as = [...new Set(layers.flatMap((l) => (l.as ? [l.as] : [])))]
    this.conflicting = as.length > 1
    if (as.length === 1) this.unprefixed = as[0]
  }

  static of(layers: readonly ViewLayer[] | undefined): SessionView {
    return layers?.length ? new SessionView(layers) : SessionView.WHOLE
  }

  get whole(): boolean {
    return this.print === ''
  }

  connector(key: string): boolean {
    if (this.conflicting || (this.unprefixed !== undefined && key !== this.unprefixed)) return false
    for (const layer of this.layers) {
      if (layer.connectors && !layer.connectors.includes(key)) return false
      if (layer.hide?.includes(key)) return false
    }
    return true
  }

  tool(tool: ViewedTool): boolean {
    if (!this.connector(tool.connector)) return false
    for (const layer of this.layers) if (!toolPasses(layer.tools?.[tool.connector], tool)) return false
    return true
  }

  /** The tools of `list` this view sees, in the same order; the same array for the whole view. */
  tools<T extends ViewedTool>(list: readonly T[]): readonly T[] {
    if (this.whole) return list
    let seen = this.filtered.get(list) as readonly T[] | undefined
    if (!seen) {
      seen = Object.freeze(list.filter((t) => this.tool(t)))
      this.filtered.set(list, seen)
    }
    return seen
  }

  /** The layers' sources, for `daemon status`. */
  get sources(): string[] {
    return this.layers.map((l) => l.from)
  }
}

/**
 * Values made once per list (by identity: a registry snapshot) and view
 * print, so that sessions sharing a view share the work, and a commit (a
 * new snapshot) makes them anew.
 */
export class PerView<T> {
  private readonly kept = new WeakMap<object, Map<string, T>>()

  get(list: object, view: SessionView, make: () => T): T {
    let byView = this.kept.get(list)
    if (!byView) {
      byView = new Map()
      this.kept.set(list, byView)
    }
    let value = byView.get(view.print)
    if (value === undefined) {
      value = make()
      byView.set(view.print, value)
    }
    return value
  }
}
