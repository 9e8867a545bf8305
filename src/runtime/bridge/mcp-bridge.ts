import type { Writable } from 'node:stream'
import type { StatePaths } from '../paths.js'
import { asLine } from './answer-stream.js'
import {
  errorLine,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  parseClientMessage,
  type ClientMessage,
  type RequestId,
} from './client-message.js'
import { DaemonHttp } from './daemon-http.js'
import { DaemonLink, type BridgeIdentity } from './daemon-link.js'
import { Forwarder } from './forwarder.js'
import { MAX_LINE_BYTES } from './line-splitter.js'
import { ListenRelay } from './listen-relay.js'
import { claimedRevision, McpHeaders } from './mcp-headers.js'
import { Relink } from './relink.js'
import { StdoutBacklog } from './stdout-backlog.js'
import { LIST_CHANGED, toolsWatch } from './tools-watch.js'
import { META } from '../mcp-wire.js'
import { isTuttiError } from '../errors.js'

type Request = Extract<ClientMessage, { kind: 'request' }>
type Notification = Extract<ClientMessage, { kind: 'notification' }>

export interface McpBridgeOptions {
  paths: StatePaths
  identity: BridgeIdentity
  output: Writable
  /** A diagnostic line for the client's log (stderr); never a token. */
  log: (line: string) => void
  /**
   * The very first line was not an MCP message: whatever is on stdin is not
   * an MCP client (a person typing, a wrong pipe), and the bridge ends with
   * exit 2. A broken line later in a session is only answered: one bad
   * message must not take every connector away from a working client.
   */
  refused?: (reason: string) => void
  /** A request (or notification) of the client settled: the intake may hand on the next line. */
  settled?: () => void
}

/**
 * `tutti session bridge`: the connector server for a client that can only
 * start a stdio server. Each line from the client is sent to the daemon's
 * HTTP endpoint as it came, in whichever era it speaks (a `_meta` claim
 * makes it 2026-07-28), and each message of the answer goes back as one
 * line. What a stdio client cannot do itself, the bridge does: the HTTP
 * headers of its era, `tools.listChanged` with the notification for 2025
 * clients (from its own listen stream), and surviving the daemon: a new
 * token at whichever daemon runs next, listen streams opened again.
 */
export class McpBridge {
  private readonly link: DaemonLink
  private readonly http = new DaemonHttp()
  private readonly headers = new McpHeaders()
  private readonly relink: Relink
  private readonly forwarder: Forwarder
  private readonly inflight = new Map<RequestId, AbortController>()
  private readonly listens = new Map<RequestId, ListenRelay>()
  /** The client's requests, notifications and listen streams not yet acknowledged, being forwarded now. */
  private busy = 0
  /** Their lines' bytes (each is held, parsed, until it settles). */
  private busyBytes = 0
  readonly backlog: StdoutBacklog
  private readonly watch: ListenRelay
  /**
   * A 2025 client that initialized: it gets `notifications/tools/list_changed` (2026 clients get theirs on their own
   * listen streams).
   */
  private legacyClient = false
  private closed = false
  /** Whether any line so far was an MCP message. */
  private spoken = false

  constructor(private readonly options: McpBridgeOptions) {
    this.link = new DaemonLink(options.paths, options.identity)
    this.relink = new Relink(this.link, this.http, options.paths.root)
    this.backlog = new StdoutBacklog(options.output)
    this.forwarder = new Forwarder(this.link, this.http, this.headers, this.backlog)
    this.watch = toolsWatch(this.http, this.link, {
      changed: () => this.announce(),
      lost: (link) => {
        if (!this.closed)
          this.options.log('tutti session bridge: the tutti daemon went away; reconnecting when it is back')
        this.relink.lost(link)
      },
    })
  }

  /** Link to the daemon at once (starting it if needed), so the client's first request does not wait for it. */
  async start(): Promise<void> {
    try {
      await this.link.ready()
      this.watch.start()
    } catch (err) {
      // a view that names a connector or tool that is not there: nothing to relay, the bridge ends with exit 2
      if (isTuttiError(err) && err.kind === 'input') return this.options.refused?.(err.message)
      this.options.log(
        `tutti session bridge: the tutti daemon cannot be reached yet (${(err as Error).message.split('\n')[0]}); ` +
          `trying again at the first request`,
      )
    }
  }

  line(bytes: Buffer): void {
    if (this.closed) return
    const message = parseClientMessage(bytes)
    if (message.kind === 'invalid') return this.invalid(message.id, message.code, message.message)
    this.spoken = true
    if (message.kind === 'request') void this.request(message)
    else if (message.kind === 'notification') this.notification(message)
    else this.forwardQuietly(message)
  }

  oversized(): void {
    this.invalid(null, INVALID_REQUEST, `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes`)
  }

  /** Answered as JSON-RPC says, and told on stderr; the first line broken ends the bridge (`refused`). */
  private invalid(id: RequestId | null, code: number, message: string): void {
    this.write(errorLine(id, code, message))
    if (this.spoken) {
      this.options.log(`tutti session bridge: answered a broken client message with ${code} (${message})`)
      return
    }
    this.options.refused?.(
      `the first message on stdin is not an MCP message (${message}): ` +
        `the bridge speaks MCP as newline-delimited JSON-RPC 2.0, ` +
        `for an MCP client that starts it (claude mcp add connector -- tutti session bridge)`,
    )
  }

  /** What the client sent that is still being forwarded or answered (the intake caps it). */
  get inFlight(): number {
    return this.busy
  }

  get inFlightBytes(): number {
    return this.busyBytes
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const ac of this.inflight.values()) ac.abort()
    for (const relay of this.listens.values()) relay.cancel()
    this.watch.cancel()
    this.relink.close()
    try {
      await this.link.revoke()
    } catch (err) {
      this.options.log(
        `tutti session bridge: its session could not be revoked (${(err as Error).message.split('\n')[0]})`,
      )
    }
    this.http.close()
  }

  private async request(message: Request): Promise<void> {
    if (message.method === 'subscriptions/listen' && claimedRevision(message.params)) return this.listen(message)
    const ac = new AbortController()
    this.inflight.set(message.id, ac)
    this.began(message)
    try {
      await this.forwarder.forward(message, ac.signal, (payload) => this.answer(message, payload))
    } finally {
      if (this.inflight.get(message.id) === ac) this.inflight.delete(message.id)
      this.settle(message)
    }
  }

  private began(message: { bytes: Buffer }): void {
    this.busy++
    this.busyBytes += message.bytes.length
  }

  private settle(message: { bytes: Buffer }): void {
    this.busy--
    this.busyBytes -= message.bytes.length
    this.options.settled?.()
  }

  private notification(message: Notification): void {
    if (message.method === 'notifications/cancelled') {
      // cancelling the HTTP request cancels the call at the daemon; no answer follows, as the client expects
      const id = message.params?.requestId as RequestId | undefined
      if (id !== undefined && this.inflight.has(id)) return this.inflight.get(id)!.abort()
      if (id !== undefined && this.listens.has(id)) {
        this.listens.get(id)!.cancel()
        this.listens.delete(id)
        return
      }
    }
    this.forwardQuietly(message)
  }

  /** A notification, or the client's answer to a request relayed to it: POSTed, nothing to answer. */
  private forwardQuietly(message: Notification | Extract<ClientMessage, { kind: 'response' }>): void {
    this.began(message)
    void this.forwarder.forward(message, undefined, () => undefined).finally(() => this.settle(message))
  }

  /** A 2026-07-28 client's listen stream: held open at the daemon for it, across daemon restarts. */
  private async listen(message: Request): Promise<void> {
    // in flight until the daemon acknowledged (or refused) it: opening streams is capped like requests
    this.began(message)
    let opening = true
    const opened = (): void => {
      if (!opening) return
      opening = false
      this.settle(message)
    }
    try {
      await this.link.ready()
    } catch (err) {
      // the client hears why, as this request's JSON-RPC error
      opened()
      return this.write(
        errorLine(
          message.id,
          INTERNAL_ERROR,
          `the tutti daemon cannot be reached: ${(err as Error).message.split('\n')[0]}`,
        ),
      )
    }
    if (this.closed) return opened()
    const relay: ListenRelay = new ListenRelay({
      bytes: message.bytes,
      id: message.id,
      headers: this.headers.of(message),
      http: this.http,
      link: this.link,
      onMessage: (payload) => {
        opened()
        this.write(asLine(payload))
      },
      onEnded: () => {
        opened()
        if (this.listens.get(message.id) === relay) this.listens.delete(message.id)
      },
      onReopened: () => {
        if (relay.honoured?.toolsListChanged)
          this.write(
            JSON.stringify({
              jsonrpc: '2.0',
              method: 'notifications/tools/list_changed',
              params: { _meta: { [META.subscriptionId]: message.id } },
            }),
          )
      },
      onLost: (link) => this.relink.lost(link),
    })
    this.listens.set(message.id, relay)
    relay.start()
  }

  /** One message of the daemon's answer to `message`, on its way to the client. */
  private answer(message: Request, payload: string): void {
    try {
      if (message.method === 'initialize' && !claimedRevision(message.params)) payload = this.initialized(payload)
      else if (message.method === 'tools/list') this.headers.learn(payload)
      this.write(asLine(payload))
    } catch {
      // the client hears why, as an internal error for this request
      this.write(errorLine(message.id, INTERNAL_ERROR, 'the tutti daemon answered with a message that is not JSON'))
    }
  }

  /**
   * A 2025 initialize result: `tools.listChanged` becomes true (the daemon
   * says false on that era, having no stream to send it on; the bridge
   * has), and the revision it settled is remembered for the requests after.
   */
  private initialized(payload: string): string {
    const answer = JSON.parse(payload) as {
      result?: { protocolVersion?: unknown; capabilities?: { tools?: Record<string, unknown> } }
    }
    const result = answer.result
    if (!result) return payload
    if (typeof result.protocolVersion === 'string') this.headers.settleLegacy(result.protocolVersion)
    result.capabilities = { ...result.capabilities, tools: { ...result.capabilities?.tools, listChanged: true } }
    this.legacyClient = true
    return JSON.stringify(answer)
  }

  private announce(): void {
    if (this.legacyClient) this.write(LIST_CHANGED)
  }

  private write(line: string): void {
    if (this.closed && !this.options.output.writable) return
    this.options.output.write(`${line}\n`)
  }
}
