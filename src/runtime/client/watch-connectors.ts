import { Client, StreamableHTTPClientTransport, type McpSubscription } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'
import { MODERN_REVISION } from '../mcp-wire.js'
import { SERVER_NAME } from '../names.js'
import type { MCPServerBinding } from '../sessions/prepared-runtime.js'
import { PRODUCT_VERSION } from '../version.js'
import { SerialRuns } from './serial-runs.js'

/**
 * A listen stream that ends without our close is reopened after these
 * pauses (the daemon's listener busy or restarting its socket); after the
 * last one the session's binding is taken as gone with its daemon, as the
 * agent's own connection is.
 */
const RELISTEN_DELAYS_MS = [100, 500, 2_000]

export interface WatchConnectorsOptions {
  /** The prepared session whose `connector` server is watched (its URL and token, from `prepareRuntime`). */
  runtime: { mcpServers: readonly MCPServerBinding[] }
  /** Told when an `onChange` run throws; the watch goes on. */
  onError?: (err: unknown) => void
}

export interface ConnectorWatch {
  /** Stops watching: the stream is closed and no `onChange` starts after the one running, which is awaited. */
  close(): Promise<void>
  /** Resolves when the watch is over: undefined after `close()`, the reason when the server went away for good. */
  readonly ended: Promise<TuttiError | undefined>
}

/**
 * Calls `onChange` each time the session's connector tools change (a
 * connector installed, connected, disconnected or removed), for hosts whose
 * agent does not act on MCP `list_changed` itself (Codex: see
 * codex-reload.ts). It holds the same kind of stream a 2026-07-28 agent
 * holds: `subscriptions/listen` on the `connector` server with the
 * session's own binding. `onChange` never runs twice at once; changes that
 * arrive during a run give exactly one more run after it. After the stream
 * had to be reopened, `onChange` runs once, since a change may have been
 * missed in between.
 */
export async function watchConnectors(
  onChange: () => void | Promise<void>,
  options: WatchConnectorsOptions,
): Promise<ConnectorWatch> {
  const server = options.runtime.mcpServers.find((s) => s.name === SERVER_NAME)
  if (!server)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `this session has no "${SERVER_NAME}" MCP server to watch (a plain session gets no connector changes)`,
    )
  const watcher = new ConnectorWatcher(server, new SerialRuns(onChange, options.onError ?? (() => {})))
  await watcher.open()
  return watcher
}

class ConnectorWatcher implements ConnectorWatch {
  readonly ended: Promise<TuttiError | undefined>
  private end!: (reason: TuttiError | undefined) => void
  private client?: Client
  private subscription?: McpSubscription
  private closing = false

  constructor(
    private readonly server: MCPServerBinding,
    private readonly runs: SerialRuns,
  ) {
    this.ended = new Promise((resolve) => (this.end = resolve))
  }

  async open(): Promise<void> {
    const client = new Client(
      { name: 'tutti-watch-connectors', version: PRODUCT_VERSION },
      { versionNegotiation: { mode: { pin: MODERN_REVISION } } },
    )
    client.setNotificationHandler('notifications/tools/list_changed', () => this.runs.changed())
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(this.server.url), { requestInit: { headers: this.server.headers } }),
      )
      this.client = client
      this.follow(await this.listen())
    } catch (err) {
      // the connect failure is thrown below; closing the half-open client adds nothing to it
      await client.close().catch(() => {})
      throw unreachable('could not open the connector change stream', err)
    }
  }

  async close(): Promise<void> {
    if (this.closing) return this.ended.then(() => {})
    this.closing = true
    // the daemon may have ended the subscription already: closing is best-effort
    await this.subscription?.close().catch(() => {})
    // the client may be gone with the daemon already: closing is best-effort
    await this.client?.close().catch(() => {})
    await this.runs.stop()
    this.end(undefined)
  }

  private async listen(): Promise<McpSubscription> {
    const subscription = await this.client!.listen({ toolsListChanged: true })
    if (!subscription.honoredFilter.toolsListChanged) {
      await subscription.close()
      throw new TuttiError(
        ErrorCodes.DAEMON_PROTOCOL,
        'the connector server does not send tools/list_changed on its listen stream',
      )
    }
    this.subscription = subscription
    return subscription
  }

  private follow(subscription: McpSubscription): void {
    void subscription.closed.then((how) => (how === 'local' || this.closing ? undefined : this.reopen(how)))
  }

  private async reopen(how: string): Promise<void> {
    let last: unknown
    for (const delay of RELISTEN_DELAYS_MS) {
      await new Promise((resolve) => setTimeout(resolve, delay).unref())
      if (this.closing) return
      try {
        this.follow(await this.listen())
        this.runs.changed()
        return
      } catch (err) {
        // kept for the report: the next delay tries again, and the last error is reported if all fail
        last = err
      }
    }
    if (this.closing) return
    this.closing = true
    // the stream already ended, and that is what is reported below, not a failed close
    await this.client?.close().catch(() => {})
    await this.runs.stop()
    this.end(unreachable(`the connector change stream ended (${how}) and could not be reopened`, last))
  }
}

function unreachable(what: string, cause: unknown): TuttiError {
  if (cause instanceof TuttiError) return cause
  return new TuttiError(
    ErrorCodes.DAEMON_UNREACHABLE,
    `${what}: ${cause instanceof Error ? cause.message : String(cause)}`,
    { cause },
  )
}
