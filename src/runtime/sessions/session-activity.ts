import type { SessionRecord } from './session-record.js'

/** One live session as `daemon status` shows it: who it is, and whether its agent has reached the connector server. */
export interface SessionActivityView {
  workspace: string
  session: string
  provider: string
  /** MCP requests that arrived with this session's token since this daemon started (0: never). */
  requests: number
  /** The last of them, ISO time; absent while there was none. */
  lastSeenAt?: string
  /** Where the session's view comes from (absent: it sees every connector). */
  view?: string[]
  /** What its tools cost the model's context now. */
  context?: { tools: number; bytes: number; tokens: number }
}

interface Seen {
  requests: number
  lastSeenMs: number
}

/**
 * Which session tokens the connector server has been reached with: a count
 * and a time per session, in memory only (a restarted daemon starts from
 * zero; nothing per request is written). It lets a person or a test see in
 * the daemon that an agent's MCP client really uses its session's token,
 * which nothing else shows without logging every request. Keyed by the
 * token's hash, never the token; a revoked session is forgotten.
 */
export class SessionActivity {
  private readonly byHash = new Map<string, Seen>()

  /**
   * One MCP request whose token verified as the session of `hash` (the hot
   * path: a map lookup and two writes). A request the node front passes on
   * to the h3 path unread (a declared body over the limit) is checked, and
   * so counted, twice.
   */
  seen(hash: string): void {
    const entry = this.byHash.get(hash)
    if (entry) {
      entry.requests++
      entry.lastSeenMs = Date.now()
    } else this.byHash.set(hash, { requests: 1, lastSeenMs: Date.now() })
  }

  forget(hashes: Iterable<string>): void {
    for (const hash of hashes) this.byHash.delete(hash)
  }

  /** Every live session (`records`: hash → record), seen or not, in issue order; `more` adds what it knows. */
  view(
    records: Iterable<[string, SessionRecord]>,
    more: (hash: string) => Partial<SessionActivityView> = () => ({}),
  ): SessionActivityView[] {
    const out: SessionActivityView[] = []
    for (const [hash, record] of records) {
      const seen = this.byHash.get(hash)
      const base = {
        workspace: record.workspace,
        session: record.session,
        provider: record.provider,
        requests: seen?.requests ?? 0,
      }
      const last = seen ? { lastSeenAt: new Date(seen.lastSeenMs).toISOString() } : {}
      out.push({ ...base, ...last, ...more(hash) })
    }
    return out
  }
}
