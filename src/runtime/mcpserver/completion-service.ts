import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { upstreamUri } from '../registry/resource-uris.js'
import type { RouteCallOptions, RouteClient } from '../registry/route.js'
import type { SessionView } from '../sessions/session-view.js'
import { promptBinding } from './prompt-service.js'
import { asProtocolError, withoutUpstreamIdentity } from './tool-service.js'

/** What a connector that offers no completions completes an argument with. */
const NONE = { completion: { values: [], hasMore: false } }

interface Ref {
  type?: unknown
  name?: unknown
  uri?: unknown
}

/**
 * completion/complete, routed by its `ref` to the connector that owns it: a
 * prompt by its published name (relayed under the upstream's), a resource
 * template by its served URI (relayed under the upstream's). A connector
 * that declared no completions completes nothing; a ref the session cannot
 * see is the client's error, as an unknown prompt is.
 */
export class CompletionService {
  constructor(private readonly registry: ConnectorMCPRegistry) {}

  async complete(
    params: Record<string, unknown>,
    view: SessionView,
    options: RouteCallOptions,
  ): Promise<Record<string, unknown>> {
    const ref = (params.ref ?? {}) as Ref
    const target = this.target(ref, view)
    if (!target) {
      const what = ref.type === 'ref/prompt' ? `prompt "${String(ref.name)}"` : `resource "${String(ref.uri)}"`
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown ${what}`)
    }
    const route = this.registry.route(target.key)
    if (!route?.surface?.features.completions || !target.client.relay) return NONE
    try {
      const answer = await target.client.relay('completion/complete', { ...params, ref: target.ref }, options)
      return withoutUpstreamIdentity(answer)
    } catch (err) {
      throw asProtocolError(err, target.key)
    }
  }

  private target(ref: Ref, view: SessionView): { key: string; client: RouteClient; ref: Ref } | undefined {
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
      const binding = promptBinding(this.registry, ref.name, view)
      if (!binding || !view.connector(binding.connectorKey)) return undefined
      return { key: binding.connectorKey, client: binding.client, ref: { ...ref, name: binding.prompt.upstreamName } }
    }
    if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
      // an unprefixed session names its connector's templates as that connector's own server does
      const parsed = view.unprefixed === undefined ? upstreamUri(ref.uri) : { key: view.unprefixed, uri: ref.uri }
      const route = parsed && view.connector(parsed.key) ? this.registry.route(parsed.key) : undefined
      return route && parsed ? { key: parsed.key, client: route.client, ref: { ...ref, uri: parsed.uri } } : undefined
    }
    return undefined
  }
}
