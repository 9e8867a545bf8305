import { createHash } from 'node:crypto'
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import { UpstreamInputRequired } from '../registry/call-relay.js'
import type { ConnectorMCPRegistry, PromptBinding } from '../registry/connector-mcp-registry.js'
import { publishedMessages } from '../registry/published-content.js'
import type { RouteCallOptions } from '../registry/route.js'
import type { ConnectorPrompt } from '../registry/surface.js'
import { ownEntry } from '../registry/unprefixed.js'
import { PerView, type SessionView } from '../sessions/session-view.js'
import { asProtocolError, withoutUpstreamIdentity } from './tool-service.js'

/** A hash of served entries, in order. */
export function printOf(entries: ReadonlyArray<{ json: string }>): string {
  const hash = createHash('sha256')
  for (const entry of entries) hash.update(entry.json).update('\n')
  return hash.digest('hex')
}

/** The prompt a session names: published (`<key>_…`), or its upstream's own for an unprefixed session. */
export function promptBinding(
  registry: ConnectorMCPRegistry,
  name: string,
  view: SessionView,
): PromptBinding | undefined {
  if (view.unprefixed === undefined) return registry.resolvePrompt(name)
  const route = registry.route(view.unprefixed)
  const prompt = route?.surface?.prompts.find((p) => p.upstreamName === name)
  return route && prompt
    ? { connectorKey: route.connectorKey, generation: route.generation, client: route.client, prompt }
    : undefined
}

const unknownPrompt = (name: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown prompt "${name}"`)

/**
 * prompts/list and prompts/get against the registry: every active
 * connector's prompts as `<key>_<prompt>`, as far as a session's view sees
 * them. A get is relayed to the connector that serves the prompt, under its
 * own name, with the arguments as given; the answer comes back as the
 * upstream gave it, its resource URIs as the connector server serves them.
 */
export class PromptService {
  private readonly lists = new PerView<readonly unknown[]>()
  private readonly prints = new PerView<string>()

  constructor(private readonly registry: ConnectorMCPRegistry) {}

  /** The prompts a view sees: its snapshot of the registry's, the same array until a commit. */
  seen(view: SessionView): readonly ConnectorPrompt[] {
    const { prompts } = this.registry.surface()
    return view.whole ? prompts : prompts.filter((p) => view.connector(p.connector))
  }

  /** Equal exactly when the prompts `view` sees, as served, are the same (list_changed compares them). */
  print(view: SessionView): string {
    const all = this.registry.surface().prompts
    return this.prints.get(all, view, () => printOf(this.seen(view)))
  }

  /** Every prompt the view sees, on one page (as tools/list). */
  list(cursor: string | undefined, view: SessionView): { prompts: unknown[] } {
    if (cursor) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown cursor "${cursor}"`)
    const all = this.registry.surface().prompts
    const served = (p: ConnectorPrompt) =>
      view.unprefixed === undefined ? JSON.parse(p.json) : ownEntry(p.json, p.upstreamName)
    return { prompts: [...this.lists.get(all, view, () => this.seen(view).map(served))] }
  }

  async get(
    name: string,
    args: Record<string, string> | undefined,
    view: SessionView,
    options: RouteCallOptions,
  ): Promise<Record<string, unknown>> {
    const binding = promptBinding(this.registry, name, view)
    if (!binding || !view.connector(binding.connectorKey) || !binding.client.relay) throw unknownPrompt(name)
    const params = { name: binding.prompt.upstreamName, ...(args ? { arguments: args } : {}) }
    try {
      const answer = withoutUpstreamIdentity(await binding.client.relay('prompts/get', params, options))
      return view.unprefixed === undefined ? publishedMessages(binding.connectorKey, answer) : answer
    } catch (err) {
      if (err instanceof UpstreamInputRequired) throw err
      throw asProtocolError(err, binding.connectorKey)
    }
  }
}
