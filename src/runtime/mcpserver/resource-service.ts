import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import { UpstreamInputRequired } from '../registry/call-relay.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { publishedContents } from '../registry/published-content.js'
import { upstreamUri } from '../registry/resource-uris.js'
import { ownEntry } from '../registry/unprefixed.js'
import type { RouteCallOptions, RouteClient } from '../registry/route.js'
import type { ConnectorResource, ConnectorResourceTemplate } from '../registry/surface.js'
import { PerView, type SessionView } from '../sessions/session-view.js'
import { printOf } from './prompt-service.js'
import { type AppCalls, isAppPage } from './app-calls.js'
import type { ResultStore } from './result-store.js'
import type { SkillCatalogue } from './skill-catalogue.js'
import { asProtocolError, withoutUpstreamIdentity } from './tool-service.js'

/** Entries per page of resources/list (skills and connector resources together). */
export const RESOURCE_PAGE_SIZE = 500

/** The error for a URI nobody serves to this session (SEP-2164: -32602 with the URI in `data`, in both eras). */
export function resourceNotFound(uri: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `resource not found: ${uri}`, { uri })
}

/** An earlier spec's "resource not found" (-32002) from an upstream is this one's (-32602), still with the URI. */
const NOT_FOUND_BEFORE_SEP_2164 = -32002

interface Listed {
  uri: string
  [key: string]: unknown
}

/** The route of the connector a served URI names, with that connector's own URI for it; undefined: none serves it. */
type Owner = { key: string; uri: string; relay: NonNullable<RouteClient['relay']> }

/**
 * resources/list, templates/list, read and subscribe over everything the
 * connector server serves as resources: the connector Skills' files (the
 * SEP-2640 skills extension, from the catalogue) and every active
 * connector's own resources, their URIs mapped by resource-uris.ts. A
 * session sees what its view sees; a URI outside it is not found.
 */
export class ResourceService {
  private readonly prints = new PerView<string>()

  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly skills: SkillCatalogue,
    /** The whole results of cut tool calls (result-store.ts), served to the session that made them. */
    private readonly stored?: { results: ResultStore },
    /** Whose MCP App pages each session was served (app-calls.ts). */
    private readonly apps?: AppCalls,
  ) {}

  seen(view: SessionView): {
    resources: readonly ConnectorResource[]
    templates: readonly ConnectorResourceTemplate[]
  } {
    const { resources, resourceTemplates } = this.registry.surface()
    if (view.whole) return { resources, templates: resourceTemplates }
    const sees = (e: { connector: string }) => view.connector(e.connector)
    return { resources: resources.filter(sees), templates: resourceTemplates.filter(sees) }
  }

  /** Equal exactly when what `view` lists as resources (the Skills' and the connectors') is the same. */
  print(view: SessionView): string {
    const { resources } = this.registry.surface()
    const own = this.prints.get(resources, view, () => {
      const { resources: r, templates } = this.seen(view)
      return printOf([...r, ...templates])
    })
    return `${own}:${this.skills.seen(view).print}`
  }

  /** One page of every resource the view sees, Skills' and connectors', sorted by URI (keyset cursor). */
  async list(cursor: string | undefined, view: SessionView): Promise<{ resources: Listed[]; nextCursor?: string }> {
    // an unprefixed session lists its connector's resources under their own URIs
    const parse = (json: string) => (view.unprefixed === undefined ? JSON.parse(json) : ownEntry(json)) as Listed
    const own = this.seen(view).resources.map((r) => parse(r.json))
    const all = [...(await this.skills.resourceEntries(view)), ...own].sort((a, b) =>
      a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0,
    )
    let start = 0
    if (cursor !== undefined) {
      const after = Buffer.from(cursor, 'base64url').toString('utf8')
      if (!after || Buffer.from(after, 'utf8').toString('base64url') !== cursor)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown cursor "${cursor.slice(0, 64)}"`)
      start = all.findIndex((r) => r.uri > after)
      if (start < 0) start = all.length
    }
    const resources = all.slice(start, start + RESOURCE_PAGE_SIZE)
    const more = start + RESOURCE_PAGE_SIZE < all.length
    const last = resources[resources.length - 1]
    return more && last ? { resources, nextCursor: Buffer.from(last.uri, 'utf8').toString('base64url') } : { resources }
  }

  /** Every resource template the view sees, on one page. */
  templates(view: SessionView): { resourceTemplates: unknown[] } {
    const parse = (json: string) => (view.unprefixed === undefined ? JSON.parse(json) : ownEntry(json))
    return { resourceTemplates: this.seen(view).templates.map((t) => parse(t.json)) }
  }

  /**
   * A stored whole result of the session's own cut call, a Skill's file, else the owning connector's answer (its
   * URIs mapped); not found for anything else.
   */
  async read(
    uri: string,
    view: SessionView,
    options: RouteCallOptions,
    session: string,
  ): Promise<Record<string, unknown>> {
    const result = this.stored?.results.read(uri, session)
    if (result) return result as unknown as Record<string, unknown>
    const skill = await this.skills.read(uri, view).catch((err: unknown) => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `${uri} cannot be served: ${(err as Error).message}`, {
        uri,
      })
    })
    if (skill) return { contents: [skill] }
    const owner = this.owner(uri, view)
    if (!owner) throw resourceNotFound(uri)
    const answer = withoutUpstreamIdentity(await this.relayed(owner, uri, 'resources/read', options))
    // the app this page is may call its server's tools by their own names now (app-calls.ts)
    if (isAppPage(uri)) this.apps?.served(session, owner.key)
    return view.unprefixed === undefined ? publishedContents(owner.key, answer) : answer
  }

  /** resources/subscribe and unsubscribe, relayed to a connector that declares them; a Skill's file has no updates. */
  async subscription(
    method: 'resources/subscribe' | 'resources/unsubscribe',
    uri: string,
    view: SessionView,
  ): Promise<void> {
    const owner = this.owner(uri, view)
    if (!owner) {
      // a Skill file that cannot be read now is still not a resource anyone may subscribe to elsewhere
      if (await this.skills.read(uri, view).catch(() => undefined)) return
      throw resourceNotFound(uri)
    }
    if (!this.registry.route(owner.key)?.surface?.features.subscribe) return
    await this.relayed(owner, uri, method, {})
  }

  /** The connector that serves `uri` to this view, if it serves resources at all. */
  owner(uri: string, view: SessionView): Owner | undefined {
    // an unprefixed session names its connector's resources as that connector's own server does
    const parsed = view.unprefixed === undefined ? upstreamUri(uri) : { key: view.unprefixed, uri }
    if (!parsed || !view.connector(parsed.key)) return undefined
    const route = this.registry.route(parsed.key)
    if (!route?.surface?.features.resources || !route.client.relay) return undefined
    return { key: parsed.key, uri: parsed.uri, relay: route.client.relay.bind(route.client) }
  }

  private async relayed(
    owner: Owner,
    uri: string,
    method: 'resources/read' | 'resources/subscribe' | 'resources/unsubscribe',
    options: RouteCallOptions,
  ): Promise<Record<string, unknown>> {
    try {
      return await owner.relay(method, { uri: owner.uri }, options)
    } catch (err) {
      // an upstream's own input_required round goes to the caller's rounds (input-rounds.ts) as it is
      if (err instanceof UpstreamInputRequired) throw err
      const error = asProtocolError(err, owner.key)
      // the upstream's own not-found, said as this server says it, with the URI the client asked for
      if (error.code === NOT_FOUND_BEFORE_SEP_2164 || error.code === ProtocolErrorCode.InvalidParams)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, { uri })
      throw error
    }
  }
}
