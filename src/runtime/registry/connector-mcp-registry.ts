import { ErrorCodes, TuttiError } from '../errors.js'
import type { ConnectorMCPRoute, ConnectorMCPTool, MCPToolBinding, RouteClient } from './route.js'
import type { ConnectorPrompt, ConnectorResource, ConnectorResourceTemplate } from './surface.js'

/** The lists a change can be to (each has its own list_changed). */
export type ListKind = 'tools' | 'prompts' | 'resources'

export interface RegistryChange {
  /** Connectors whose visible lists changed. */
  connectors: string[]
  /** Which of their lists. */
  kinds: ListKind[]
}

/** What a prompts/get (or a completion of a prompt's argument) is bound to when it starts. */
export interface PromptBinding {
  readonly connectorKey: string
  readonly generation: number
  readonly client: RouteClient
  readonly prompt: ConnectorPrompt
}

type Prints = Record<ListKind, string | undefined>

/** Every connector's prompts, resources and templates, sorted: one frozen array each until a commit. */
interface SurfaceSnapshot {
  prompts: readonly ConnectorPrompt[]
  resources: readonly ConnectorResource[]
  resourceTemplates: readonly ConnectorResourceTemplate[]
}

const EMPTY: SurfaceSnapshot = Object.freeze({ prompts: [], resources: [], resourceTemplates: [] })

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
  private readonly promptBindings = new Map<string, PromptBinding>()
  /** Per route (a generation): its tools by the upstream's own names, made when first asked. */
  private readonly byUpstreamName = new WeakMap<ConnectorMCPRoute, Map<string, MCPToolBinding>>()
  private readonly fingerprints = new Map<string, Prints>()
  private snapshot: readonly ConnectorMCPTool[] = []
  private surfaces: SurfaceSnapshot = EMPTY
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
    const { surface } = frozen
    const prints = { tools: frozen.fingerprint, prompts: surface?.prints.prompts, resources: surface?.prints.resources }
    return { changed: this.changed(key, prints) }
  }

  remove(key: string, generation: number): { removed: boolean; changed: boolean } {
    const fence = Math.max(this.fence(key), generation)
    this.fences.set(key, fence)
    this.removed.set(key, Math.max(this.removed.get(key) ?? 0, generation))
    const current = this.routes.get(key)
    if (!current || current.generation > generation) return { removed: false, changed: false }
    this.routes.delete(key)
    return { removed: true, changed: this.changed(key, { tools: undefined, prompts: undefined, resources: undefined }) }
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
   * A tool of `key` by its upstream's own name (an unprefixed session, an MCP App's call), bound to the generation
   * serving now.
   */
  resolveUpstream(key: string, upstreamName: string): MCPToolBinding | undefined {
    const route = this.routes.get(key)
    if (!route) return undefined
    let byName = this.byUpstreamName.get(route)
    if (!byName) {
      const { connectorKey, generation, client } = route
      byName = new Map(route.tools.map((tool) => [tool.upstreamName, { connectorKey, generation, client, tool }]))
      this.byUpstreamName.set(route, byName)
    }
    return byName.get(upstreamName)
  }

  /** Every visible prompt, resource and resource template, each list sorted. */
  surface(): SurfaceSnapshot {
    if (this.stale) this.rebuild()
    return this.surfaces
  }

  resolvePrompt(localName: string): PromptBinding | undefined {
    if (this.stale) this.rebuild()
    return this.promptBindings.get(localName)
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

  /** Records the route's new prints; the change event fires only for the lists whose visible content changed. */
  private changed(key: string, prints: Prints): boolean {
    this.stale = true
    const before = this.fingerprints.get(key)
    if (prints.tools === undefined) this.fingerprints.delete(key)
    else this.fingerprints.set(key, prints)
    const kinds = (['tools', 'prompts', 'resources'] as const).filter((k) => before?.[k] !== prints[k])
    // the tools' change decides `changed`, as it always has: a table committed with new prompts only is not a swap
    if (kinds.length) for (const listener of this.listeners) listener({ connectors: [key], kinds })
    return kinds.includes('tools')
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
    this.rebuildSurface()
  }

  private rebuildSurface(): void {
    this.promptBindings.clear()
    const prompts: ConnectorPrompt[] = []
    const resources: ConnectorResource[] = []
    const resourceTemplates: ConnectorResourceTemplate[] = []
    for (const route of this.routes.values()) {
      const { surface } = route
      if (!surface) continue
      for (const prompt of surface.prompts) {
        const { connectorKey, generation, client } = route
        this.promptBindings.set(prompt.localName, Object.freeze({ connectorKey, generation, client, prompt }))
        prompts.push(prompt)
      }
      resources.push(...surface.resources)
      resourceTemplates.push(...surface.resourceTemplates)
    }
    const by =
      <T>(key: (t: T) => string) =>
      (a: T, b: T) =>
        key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0
    this.surfaces = Object.freeze({
      prompts: Object.freeze(prompts.sort(by((p) => p.localName))),
      resources: Object.freeze(resources.sort(by((r) => r.uri))),
      resourceTemplates: Object.freeze(resourceTemplates.sort(by((t) => t.uriTemplate))),
    })
  }
}

function byName(a: ConnectorMCPTool, b: ConnectorMCPTool): number {
  return a.localName < b.localName ? -1 : a.localName > b.localName ? 1 : 0
}
