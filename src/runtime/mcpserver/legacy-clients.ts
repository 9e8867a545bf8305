import type { ClientCapabilities } from '../registry/call-relay.js'

/** MCP's log levels, least severe first (notifications/message, logging/setLevel). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const

export type LogLevel = (typeof LOG_LEVELS)[number]

export const isLogLevel = (v: unknown): v is LogLevel => typeof v === 'string' && LOG_LEVELS.includes(v as LogLevel)

/** Whether a message at `level` passes a client's `threshold`. */
export function passes(level: string, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level as LogLevel) >= LOG_LEVELS.indexOf(threshold)
}

/** The client capabilities that let a server send requests on a call's way (a 2025 session with one: the SDK path). */
const RELAYED = ['elicitation', 'sampling', 'roots'] as const

export const declaresRelayed = (caps: ClientCapabilities | undefined): boolean =>
  !!caps && RELAYED.some((name) => caps[name] !== undefined)

interface LegacyClient {
  capabilities?: ClientCapabilities
  level?: LogLevel
}

/**
 * What a 2025-era session told the server once, for every request after:
 * the client capabilities of its `initialize` (which requests may be sent
 * to it while it waits for a call) and the level of its `logging/setLevel`.
 * The SDK serves each 2025 request on a fresh server that never saw either,
 * so the endpoint keeps them, by session (token hash); the latest
 * initialize of a session wins (one token may serve a reconnecting client).
 * A session's entry goes with its token.
 */
export class LegacyClients {
  private readonly clients = new Map<string, LegacyClient>()

  initialized(session: string, capabilities: unknown): void {
    const caps = capabilities && typeof capabilities === 'object' ? (capabilities as ClientCapabilities) : {}
    this.clients.set(session, { ...this.clients.get(session), capabilities: caps })
  }

  setLevel(session: string, level: LogLevel): void {
    this.clients.set(session, { ...this.clients.get(session), level })
  }

  capabilities(session: string): ClientCapabilities | undefined {
    return this.clients.get(session)?.capabilities
  }

  level(session: string): LogLevel | undefined {
    return this.clients.get(session)?.level
  }

  /**
   * A call of this session may have to carry more than its answer: requests
   * the client declared it takes, or log messages it asked for. The fast
   * path, which writes one answer, leaves such a session's calls to the SDK.
   */
  needsStream(session: string): boolean {
    const client = this.clients.get(session)
    return !!client && (client.level !== undefined || declaresRelayed(client.capabilities))
  }

  forget(sessions: Iterable<string>): void {
    for (const session of sessions) this.clients.delete(session)
  }
}
