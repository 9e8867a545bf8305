import { ErrorCodes, TuttiError } from '../errors.js'
import type { ConnectorMCPRoute, ConnectorMCPTool, MCPToolBinding } from './route.js'

export interface RegistryChange {
  /** Connectors whose visible tools changed. */
  connectors: string[]
}

/**
 * The pure core (DESIGN §7): every active connector's route, swapped whole
 * and fenced by generation. No HTTP, SDK or process code lives here.
 *
 * - commit(route) replaces a connector's tool set atomically; a generation at
 *   or below the connector's fence is refused, so a slow, stale build can
 *   never overwrite a newer one. There is never a window with no tools.
 * - remove(key, generation) fences; removing an absent route still advances
 *   the fence, so nothing stale can come back.
 * - a change event fires only when the visible list really changed.
 */
export class ConnectorMCPRegistry {
  private readonly routes = new Map<string, ConnectorMCPRoute>()
  private readonly fences = new Map<string, number>()
  /** Highest generation removed per connector: bindings at or below it may not dispatch. */
  private readonly removed = new Map<string, number>()
  private readonly bindings = new Map<string, MCPToolBinding>()
  private readonly fingerprints = new Map<string, string>()
  private snapshot: readonly ConnectorMCPTool[] = []
  /**
   * The snapshot and bindings are rebuilt when next read, not on every
   * commit: rebuilding all tools per commit made the start-up reconcile of
   * 100 connectors × 50 tools quadratic (~200 ms of rebuilds and as much GC).
   */
  private stale = false
  private readonly listeners = new Set<(change: RegistryChange) => void>()

  /** The generation a new build for `key` should use. */
  nextGeneration(key: string): number {
    return (this.fences.get(key) ?? 0) + 1
  }

  fence(key: string): number {
    return this.fences.get(key) ?? 0
  }

  route(key: string): ConnectorMCPRoute | undefined {
    return this.routes.get(key)
  }

  commit(route: ConnectorMCPRoute): { changed: boolean } {
    const key = route.connectorKey
    const fence = this.fence(key)
    if (route.generation <= fence) {
      throw new TuttiError(
        ErrorCodes.STALE_GENERATION,
        `connector "${key}": generation ${route.generation} is at or below the fence ${fence}`,
      )
    }
    // buildRoute validated, serialized and fingerprinted the table: nothing below can throw half-way
    const frozen: ConnectorMCPRoute = Object.freeze({
      ...route,
      tools: Object.freeze([...route.tools].sort(byName)) as ConnectorMCPTool[],
    })
    this.fences.set(key, route.generation)
    this.routes.set(key, frozen)
    return { changed: this.changed(key, frozen.fingerprint) }
  }

  remove(key: string, generation: number): { removed: boolean; changed: boolean } {
    const fence = Math.max(this.fence(key), generation)
    this.fences.set(key, fence)
    this.removed.set(key, Math.max(this.removed.get(key) ?? 0, generation))
    const current = this.routes.get(key)
    if (!current || current.generation > generation) return { removed: false, changed: false }
    this.routes.delete(key)
    return { removed: true, changed: this.changed(key, undefined) }
  }

  /** A stable, sorted snapshot of every visible tool. */
  list(): readonly ConnectorMCPTool[] {
    if (this.stale) this.rebuild()
    return this.snapshot
  }

  resolve(localName: string): MCPToolBinding | undefined {
    if (this.stale) this.rebuild()
    return this.bindings.get(localName)
  }

  /**
   * Throws when the binding's generation was fenced by a removal after the
   * call resolved it. A swap to a newer generation does not fence: calls
   * already bound to the old one finish on it.
   */
  assertDispatchable(binding: MCPToolBinding): void {
    const removedThrough = this.removed.get(binding.connectorKey) ?? 0
    if (binding.generation <= removedThrough) {
      throw new TuttiError(
        ErrorCodes.STALE_GENERATION,
        `tool "${binding.tool.localName}" is no longer available: connector "${binding.connectorKey}" was removed ` +
          `(generation ${binding.generation} fenced)`,
      )
    }
  }

  onChange(listener: (change: RegistryChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Records the route's new fingerprint; the change event fires only when the visible tools changed. */
  private changed(key: string, print: string | undefined): boolean {
    this.stale = true
    const before = this.fingerprints.get(key)
    if (print === undefined) this.fingerprints.delete(key)
    else this.fingerprints.set(key, print)
    const changed = before !== print
    if (changed) for (const listener of this.listeners) listener({ connectors: [key] })
    return changed
  }

  private rebuild(): void {
    this.stale = false
    const bindings = new Map<string, MCPToolBinding>()
    const all: ConnectorMCPTool[] = []
    for (const route of this.routes.values()) {
      for (const tool of route.tools) {
        const { connectorKey, generation, client, maxResultBytes } = route
        bindings.set(tool.localName, Object.freeze({ connectorKey, generation, client, tool, maxResultBytes }))
        all.push(tool)
      }
    }
    this.bindings.clear()
    for (const [name, b] of bindings) this.bindings.set(name, b)
    this.snapshot = Object.freeze(all.sort(byName))
  }
}

function byName(a: ConnectorMCPTool, b: ConnectorMCPTool): number {
  return a.localName < b.localName ? -1 : a.localName > b.localName ? 1 : 0
}
