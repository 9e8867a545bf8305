import { randomUUID } from 'node:crypto'
import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import { CallCancel } from '../registry/call-cancel.js'
import {
  missingCapabilities,
  requiredCapabilities,
  undeclaredMessage,
  withoutUpstreamToken,
  type CallLogMessage,
  type CallProgress,
  type CallRelay,
  type ClientCapabilities,
  type ServerRequestMethod,
  type UpstreamRound,
} from '../registry/call-relay.js'
import { passes, type LogLevel } from './legacy-clients.js'

/** Where one round (one HTTP request of the client) takes what the upstream says meanwhile. */
export interface RoundSink {
  notify(notification: { method: string; params: Record<string, unknown> }): void
  /** The round's own progressToken (each retry may carry a new one). */
  progressToken?: string | number
  /** The round's `_meta` logLevel: without one, no log message is sent (2026-07-28). */
  logLevel?: LogLevel
  /** What the round's request declared it can answer. */
  capabilities?: ClientCapabilities
}

/** How a relayed request ends: the result the client gets, or the error it gets. */
export type Settled = { value: Record<string, unknown> } | { error: unknown }

/** What a round waits for: the request's end, or requests of the upstream for the client to answer. */
export type RoundStep = { settled: Settled } | { inputRequests: Record<string, Record<string, unknown>> }

interface PendingInput {
  request: Record<string, unknown>
  resolve(result: Record<string, unknown>): void
}

/**
 * One 2026-07-28 request (a tools/call, prompts/get or resources/read)
 * whose upstream may ask the client something while serving it. The
 * upstream request keeps running between the client's rounds: each
 * request of the upstream becomes an entry of the next `input_required`
 * result, under a key of this call's, and the client's `inputResponses`
 * of the next round answer them (input-rounds.ts keeps the call between
 * rounds). Its capabilities are those of the client's latest round.
 */
export class RelayedCall {
  readonly id = randomUUID()
  /** Rounds answered with input_required so far. */
  round = 0
  readonly cancel = new CallCancel()
  readonly relay: CallRelay
  private settled?: Settled
  private readonly pending = new Map<string, PendingInput>()
  private nextKey = 1
  private sink?: RoundSink
  private capabilities?: ClientCapabilities
  private wake?: () => void

  constructor(
    readonly session: string,
    /** What the request is (method and name or URI): a retry must name the same. */
    readonly subject: string,
    first: RoundSink,
    private readonly maxRounds: number,
    /** What goes back to an upstream that passed its own round through (input-rounds.ts). */
    rounds: UpstreamRound = {},
  ) {
    this.capabilities = first.capabilities
    this.relay = {
      session,
      ...(first.progressToken !== undefined ? { progress: (p: CallProgress) => this.progress(p) } : {}),
      ...(first.logLevel ? { log: (m: CallLogMessage) => this.log(m), logLevel: first.logLevel } : {}),
      request: (method, params, signal) => this.ask(method, params, signal),
      awaitingClient: () => this.pending.size > 0,
      ...(first.capabilities ? { capabilities: first.capabilities } : {}),
      rounds,
    }
  }

  /** Starts the upstream request; `run` resolves with its result or throws the error the client gets. */
  start(run: (relay: CallRelay, cancel: CallCancel) => Promise<Record<string, unknown>>): void {
    run(this.relay, this.cancel).then(
      (value) => this.settle({ value }),
      (error: unknown) => this.settle({ error }),
    )
  }

  /** The round now serving the call (undefined between rounds: what the upstream sends meanwhile is dropped). */
  attach(sink: RoundSink | undefined): void {
    this.sink = sink
    if (sink?.capabilities) this.capabilities = sink.capabilities
  }

  /** The client's answers of a round, by this call's keys; an entry it left out is asked again. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, value] of Object.entries(responses ?? {})) {
      const pending = this.pending.get(key)
      if (!pending || !value || typeof value !== 'object') continue
      this.pending.delete(key)
      pending.resolve(value as Record<string, unknown>)
    }
  }

  /** The end of the request, or the upstream's requests to ask the client in an input_required result. */
  async next(signal: AbortSignal): Promise<RoundStep> {
    for (;;) {
      if (this.settled) return { settled: this.settled }
      if (this.pending.size)
        return { inputRequests: Object.fromEntries([...this.pending].map(([key, p]) => [key, p.request])) }
      if (signal.aborted) throw signal.reason
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.wake = undefined
          signal.removeEventListener('abort', done)
          resolve()
        }
        this.wake = done
        signal.addEventListener('abort', done, { once: true })
      })
    }
  }

  /** Given up (the client never came back, or went away): the upstream request is cancelled. */
  abandon(reason: string): void {
    this.cancel.cancel(new Error(reason))
  }

  private settle(settled: Settled): void {
    this.settled = settled
    this.wake?.()
  }

  private ask(
    method: ServerRequestMethod,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const missing = missingCapabilities(requiredCapabilities(method, params), this.capabilities)
    if (missing)
      return Promise.reject(
        new MissingRequiredClientCapabilityError(
          { requiredCapabilities: missing as never },
          undeclaredMessage(method, missing),
        ),
      )
    if (this.round >= this.maxRounds)
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InternalError,
          `this call asked the client ${this.maxRounds} times already`,
        ),
      )
    const key = `${method.split('/')[0]}-${this.nextKey++}`
    // the 2026-07-28 shape of URL-mode elicitation has no elicitationId (the 2025 one needs it)
    const own = withoutUpstreamToken(params)
    const { elicitationId: _id, ...inBand } = own ?? {}
    const request = { method, ...(own ? { params: method === 'elicitation/create' ? inBand : own } : {}) }
    return new Promise((resolve, reject) => {
      const withdraw = (): void => {
        if (this.pending.delete(key)) reject(new ProtocolError(ProtocolErrorCode.InternalError, `${method} withdrawn`))
      }
      if (signal.aborted) return withdraw()
      signal.addEventListener('abort', withdraw, { once: true })
      this.pending.set(key, {
        request,
        resolve: (result) => {
          signal.removeEventListener('abort', withdraw)
          resolve(result)
        },
      })
      this.wake?.()
    })
  }

  private progress(p: CallProgress): void {
    const token = this.sink?.progressToken
    if (token === undefined) return
    this.sink!.notify({ method: 'notifications/progress', params: { progressToken: token, ...p } })
  }

  private log(message: CallLogMessage): void {
    const level = this.sink?.logLevel
    if (!level || !passes(message.level, level)) return
    this.sink!.notify({ method: 'notifications/message', params: { ...message } })
  }
}
