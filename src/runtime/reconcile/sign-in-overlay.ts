import { freeze, type ConnectorSnapshot } from './connector-snapshot.js'

/**
 * OAuth state the Reconciler lays over connector snapshots: connectors
 * whose grant needs the user (active, CLI and Skills working, no MCP route,
 * status needs-auth with this reason), and remote connectors without auth
 * in the manifest whose server asked for a sign-in (OAuth from then on,
 * until uninstall).
 */
export class SignInOverlay {
  private readonly needed = new Map<string, string>()
  private readonly found = new Set<string>()

  /** Each reconcile decides again. */
  clear(key: string): void {
    this.needed.delete(key)
  }

  /** `key` has no usable grant: the user must sign in, for `reason`. */
  need(key: string, reason: string): void {
    this.needed.set(key, reason)
  }

  /** The server of `key` asked for an OAuth sign-in the manifest did not mention. */
  markFound(key: string): void {
    this.found.add(key)
  }

  wasFound(key: string): boolean {
    return this.found.has(key)
  }

  /** Uninstalled: nothing of it is remembered. */
  forget(key: string): void {
    this.needed.delete(key)
    this.found.delete(key)
  }

  /** The snapshot as interfaces show it: needs-auth on its MCP side while a sign-in is needed. */
  over(key: string, snapshot: ConnectorSnapshot | undefined): ConnectorSnapshot | undefined {
    const reason = this.needed.get(key)
    if (!reason || !snapshot?.mcp) return snapshot
    return freeze({ ...snapshot, mcp: { ...snapshot.mcp, status: 'needs-auth', reason } })
  }
}
