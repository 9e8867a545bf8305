import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { MCPToolBinding } from '../registry/route.js'
import type { SessionView } from '../sessions/session-view.js'

/** Connectors a session keeps apps of: the most recent pages win, and a session holds no more than this. */
const PAGES_PER_SESSION = 16

/** An MCP App's page: a resource its server serves under the `ui:` scheme (SEP-1865). */
export const isAppPage = (uri: string): boolean => uri.startsWith('ui:')

/**
 * The routing rule for an MCP App's own calls (SEP-1865). An app is a page
 * its server serves as a `ui://` resource; the host renders it, and passes
 * the app's `tools/call`s to the server that served the page, under the
 * names the app knows: its server's own, not the `<key>_…` names tutti
 * publishes. So: when a session's tools/call names no tool it sees, and the
 * session was served an app page of connector K (the most recent first),
 * the call goes to K's tool of that upstream name, if the session's view
 * sees it. A page of another session's is not this session's: pages are
 * kept per session token, and go with a revoked one.
 */
export class AppCalls {
  private readonly pages = new Map<string, string[]>()

  constructor(private readonly registry: ConnectorMCPRegistry) {}

  /** `session` was served an app page of connector `key`. */
  served(session: string, key: string): void {
    const keys = (this.pages.get(session) ?? []).filter((k) => k !== key)
    keys.push(key)
    this.pages.set(session, keys.slice(-PAGES_PER_SESSION))
  }

  /** The tool an app's call names, by its server's own name; undefined when no app page of the session has one. */
  tool(session: string, view: SessionView, name: string): MCPToolBinding | undefined {
    const keys = this.pages.get(session)
    if (!keys) return undefined
    for (let i = keys.length - 1; i >= 0; i--) {
      const binding = this.registry.resolveUpstream(keys[i]!, name)
      if (binding && view.tool(binding.tool)) return binding
    }
    return undefined
  }

  forget(sessions: readonly string[]): void {
    for (const session of sessions) this.pages.delete(session)
  }
}
