import { AsyncLocalStorage } from 'node:async_hooks'
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Client,
} from '@modelcontextprotocol/client'
import { MODERN_REVISION } from '../mcp-wire.js'
import type { Logger } from '../log/logger.js'
import {
  narrowedTo,
  requiredCapabilities,
  SERVER_REQUEST_METHODS,
  undeclaredMessage,
  type CallRelay,
  type ServerRequestMethod,
} from '../registry/call-relay.js'
import { associate } from './relay-association.js'

/**
 * What tutti's upstream client declares at initialize, so that servers
 * offer what needs it (server-everything registers its elicitation,
 * sampling and roots tools only then). Whether a given request reaches a
 * client is decided per call: the caller's own capabilities.
 */
export const UPSTREAM_CLIENT_CAPABILITIES = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  roots: {},
} as const

/** The request a message from the upstream arrived in the async context of (HTTP upstreams; see associate()). */
const callContext = new AsyncLocalStorage<CallRelay>()

/**
 * One connection's requests in flight for sessions, and the handlers that
 * relay what the upstream sends about them: a request of its own
 * (elicitation/create, sampling/createMessage, roots/list) goes to the
 * session whose request it serves and comes back as that client's answer;
 * a log message goes to that caller. Progress needs no association: a
 * request whose caller wants progress carries a progressToken of this
 * connection's, and the upstream's progress for it goes to that caller
 * with the caller's own token. Where nothing can be associated, the
 * upstream gets an error at once and a log message is dropped
 * (relay-association.ts).
 */
export class CallRelays {
  /** By relay, how many of its requests are in flight (one, unless a caller reuses a relay); oldest first. */
  private readonly inFlight = new Map<CallRelay, number>()
  /** The progressTokens of requests in flight, by token: unique on this connection. */
  private readonly progress = new Map<string, CallRelay>()
  private nextToken = 1
  private client?: Client
  /** Where the upstream's latest request went, until tutti sends the upstream something (relay-association.ts). */
  private burst?: CallRelay

  /**
   * `trustContext`: the connection delivers a request's messages in that
   * request's async context (HTTP). A stdio upstream's pipe runs in the
   * context that spawned it, which is no call's (outsideCalls), but a pipe
   * says nothing about which call a message serves either way.
   */
  constructor(
    private readonly connector: string,
    private readonly trustContext: boolean,
    private readonly log?: Logger,
  ) {}

  /**
   * Runs `open` outside every call's async context: a process, pipe, socket
   * or stream made while connecting must never carry the context of the
   * call that happened to start a lazy upstream.
   */
  static outsideCalls<T>(open: () => T): T {
    return callContext.exit(open)
  }

  /** The handlers on the SDK client, before it connects. */
  install(client: Client): void {
    this.client = client
    for (const method of SERVER_REQUEST_METHODS) {
      // the SDK client checks the answer against the method's result schema before the upstream gets it
      client.setRequestHandler(
        method,
        (request, ctx) =>
          this.request(method, request.params as Record<string, unknown> | undefined, ctx.mcpReq.signal) as never,
      )
    }
    // the SDK client's own progress handling drops a progress that arrives with the answer (it forgets the token on
    // the answer, synchronously, and reads the notification a microtask later): this one keeps the token until the
    // request has settled, and it is tutti's own
    client.setNotificationHandler('notifications/progress', (notification) => {
      const { progressToken, progress, total, message } = notification.params
      this.progress.get(String(progressToken))?.progress?.({
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      })
    })
    client.setNotificationHandler('notifications/message', (notification) => {
      const found = associate(callContext.getStore(), this.trustContext, this.inFlight.keys(), this.burst)
      if ('relay' in found) found.relay.log?.(notification.params as never)
      else this.log?.debug('upstream log message dropped', { connector: this.connector, reason: found.refused })
    })
  }

  /**
   * `request` as one of `relay`'s session: counted in flight, and (HTTP) run
   * in its async context. `meta` is what its params' `_meta` must carry: a
   * progressToken when the caller wants progress; for a 2026-07-28
   * upstream the level it is asked to log at for the request (a 2025 one
   * logs at its connection's level: logging/setLevel, which tutti leaves
   * alone, filtering per caller instead); and when the caller can answer
   * less than this connection declared, what it can (the 2026-07-28
   * clientCapabilities key, which replaces the SDK's own envelope entry, so
   * that an upstream asks only what the caller can answer).
   */
  async track<T>(relay: CallRelay | undefined, request: (meta?: Record<string, unknown>) => Promise<T>): Promise<T> {
    if (!relay) return request()
    const token = relay.progress ? `tutti-${this.nextToken++}` : undefined
    if (token) this.progress.set(token, relay)
    const level = this.client?.getNegotiatedProtocolVersion() === MODERN_REVISION ? relay.logLevel : undefined
    const narrowed = relay.capabilities && narrowedTo(UPSTREAM_CLIENT_CAPABILITIES, relay.capabilities)
    const meta =
      token || level || narrowed
        ? {
            ...(token ? { progressToken: token } : {}),
            ...(level ? { [LOG_LEVEL_META_KEY]: level } : {}),
            ...(narrowed ? { [CLIENT_CAPABILITIES_META_KEY]: narrowed } : {}),
          }
        : undefined
    this.inFlight.set(relay, (this.inFlight.get(relay) ?? 0) + 1)
    this.burst = undefined
    try {
      return await (this.trustContext ? callContext.run(relay, () => request(meta)) : request(meta))
    } finally {
      if (token) this.progress.delete(token)
      const left = this.inFlight.get(relay)! - 1
      if (left > 0) this.inFlight.set(relay, left)
      else this.inFlight.delete(relay)
    }
  }

  private async request(
    method: ServerRequestMethod,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const found = associate(callContext.getStore(), this.trustContext, this.inFlight.keys(), this.burst)
    if ('refused' in found) {
      this.log?.info('upstream request declined', { connector: this.connector, method, reason: found.refused })
      throw new ProtocolError(ProtocolErrorCode.InternalError, `tutti cannot relay ${method}: ${found.refused}`)
    }
    const { relay } = found
    // a refusal causes no new question: a request of the same round that follows it is still this call's
    this.burst = relay
    // a caller served without a relay of requests declared none of the capabilities they need
    if (!relay.request)
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: requiredCapabilities(method, params) as never },
        undeclaredMessage(method, requiredCapabilities(method, params)),
      )
    const answer = await relay.request(method, params, signal)
    // the client's answer goes to the upstream now, and what the upstream asks next may follow from it
    this.burst = undefined
    return answer
  }
}

/** `params` with `extra` merged into its `_meta` (none: `params` as it is). */
export function withMeta<P extends Record<string, unknown>>(params: P, extra: Record<string, unknown> | undefined): P {
  if (!extra) return params
  return { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), ...extra } }
}
