import { randomBytes } from 'node:crypto'
import {
  createRequestStateCodec,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { CallCancel } from '../registry/call-cancel.js'
import { UpstreamInputRequired, type CallRelay } from '../registry/call-relay.js'
import { exchangeOf } from './exchange.js'
import { RelayedCall, type RoundSink } from './relayed-call.js'

/** The bounds of 2026-07-28 input_required rounds (SEP-2322), named once. */
export const INPUT_ROUND_LIMITS = {
  /** A call waits this long for its client's next round; then it is cancelled and its requestState expires. */
  roundMs: 10 * 60_000,
  /** input_required answers one call may give; past them its upstream's requests are refused, and it is cancelled. */
  maxRounds: 16,
  /** Calls waiting for their client's next round, per session and over all sessions. */
  parkedPerSession: 32,
  parked: 512,
} as const

/**
 * What a requestState carries: a parked call and the round it answers (a
 * state is good for one retry); or, for an upstream that passed its own
 * round through, its requestState (`u`, '' when it gave none), what the
 * request was (`s`) and how many rounds it has had (`n`).
 */
type RoundState = { c: string; r: number } | { u: string; s: string; n: number }

/** The SDK's own refusal of a requestState (its verify seam answers exactly this). */
const invalidState = () =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', {
    reason: 'invalid_request_state',
  })

/**
 * 2026-07-28 requests whose upstream asks the client something: answered
 * `input_required` with the upstream's requests and a `requestState`, the
 * upstream request kept running until the client retries with
 * `inputResponses` and that state (multi round-trip requests, SEP-2322).
 * The state is the SDK's HMAC codec under a key that lives as long as the
 * daemon, bound to the session: the SDK's verify seam refuses a tampered,
 * expired or foreign one (-32602) before the handler runs. A state names
 * the call and its round, so it serves one retry. Between rounds the call
 * is parked here, within INPUT_ROUND_LIMITS. An upstream on a 2026-07-28
 * link asks in rounds of its own: those pass through under its keys, and
 * nothing is parked (its requestState travels inside this server's).
 */
export class InputRounds {
  private readonly parked = new Map<string, { call: RelayedCall; timer: NodeJS.Timeout }>()
  private readonly codec = createRequestStateCodec<RoundState>({
    key: randomBytes(32),
    ttlSeconds: INPUT_ROUND_LIMITS.roundMs / 1000,
    // the session (its token's hash) that the state was minted for; the SDK stores only an HMAC tag of it
    bind: (ctx) => exchangeOf(ctx.http?.authInfo).session,
  })

  /** `ServerOptions.requestState.verify`: the decoded state, or a throw the SDK answers with its -32602. */
  readonly verify = (state: string, ctx: ServerContext): Promise<RoundState> => this.codec.verify(state, ctx)

  get size(): number {
    return this.parked.size
  }

  /**
   * One round of a request: the first (no requestState) starts the upstream
   * request with `start`; a retry gives the client's answers to the call its
   * state names. Resolves with the result, or with an input_required result
   * when the upstream asked something; throws the error the client gets.
   */
  async serve(
    session: string,
    subject: string,
    ctx: ServerContext,
    sink: RoundSink,
    start: (relay: CallRelay, cancel: CallCancel) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    const state = ctx.mcpReq.requestState<RoundState>()
    let call: RelayedCall
    if (state === undefined || 'u' in state) {
      // an upstream's own round comes back to it as it left, with this round's answers (a stateless upstream may
      // take answers without a state of its own, so a first round's go too)
      const rounds = this.passedBack(state, subject, ctx)
      call = new RelayedCall(session, subject, sink, INPUT_ROUND_LIMITS.maxRounds, rounds)
      if (state) call.round = state.n
      call.start(start)
    } else {
      call = this.resume(state, session, subject)
      call.answer(ctx.mcpReq.inputResponses)
    }
    call.attach(sink)
    let step: Awaited<ReturnType<RelayedCall['next']>>
    try {
      step = await call.next(ctx.mcpReq.signal)
    } catch (err) {
      call.abandon('the client went away during a round')
      throw err
    } finally {
      call.attach(undefined)
    }
    if ('settled' in step) {
      const { settled } = step
      if ('error' in settled && settled.error instanceof UpstreamInputRequired)
        return this.passOn(call, settled.error, ctx)
      if ('error' in settled) throw settled.error
      return settled.value
    }
    if (call.round >= INPUT_ROUND_LIMITS.maxRounds) {
      call.abandon('too many rounds')
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `the upstream still asked for input after ${INPUT_ROUND_LIMITS.maxRounds} rounds; the call was cancelled`,
      )
    }
    call.round++
    this.park(call)
    const requestState = await this.codec.mint({ c: call.id, r: call.round }, ctx)
    return { resultType: 'input_required', inputRequests: step.inputRequests, requestState }
  }

  /** The answers and the upstream's state a passed-through round gives back; another request's state is refused. */
  private passedBack(state: { u: string; s: string; n: number } | undefined, subject: string, ctx: ServerContext) {
    if (state && state.s !== subject) throw invalidState()
    const inputResponses = ctx.mcpReq.inputResponses as Record<string, unknown> | undefined
    return { ...(inputResponses ? { inputResponses } : {}), ...(state?.u ? { requestState: state.u } : {}) }
  }

  /**
   * An upstream's own input_required, passed through: its requests under its
   * own keys, its requestState inside this server's (bound to the session
   * and the request, so that it goes back only to that upstream request).
   */
  private async passOn(call: RelayedCall, asked: UpstreamInputRequired, ctx: ServerContext) {
    if (call.round >= INPUT_ROUND_LIMITS.maxRounds)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `the upstream still asked for input after ${INPUT_ROUND_LIMITS.maxRounds} rounds`,
      )
    const state = { u: asked.requestState ?? '', s: call.subject, n: call.round + 1 }
    const requestState = await this.codec.mint(state, ctx)
    return { resultType: 'input_required', inputRequests: asked.inputRequests, requestState }
  }

  /** A verified state's call, taken out of the parked ones for its round. */
  private resume(state: { c: string; r: number }, session: string, subject: string): RelayedCall {
    const parked = this.parked.get(state?.c)
    // verified and bound already; a stale round, another request or a finished call is the same refusal
    if (!parked || parked.call.session !== session || parked.call.round !== state.r || parked.call.subject !== subject)
      throw invalidState()
    clearTimeout(parked.timer)
    this.parked.delete(state.c)
    return parked.call
  }

  private park(call: RelayedCall): void {
    let mine = 0
    for (const { call: other } of this.parked.values()) if (other.session === call.session) mine++
    if (mine >= INPUT_ROUND_LIMITS.parkedPerSession || this.parked.size >= INPUT_ROUND_LIMITS.parked) {
      call.abandon('too many calls wait for input')
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `too many calls wait for their client's input (at most ${INPUT_ROUND_LIMITS.parkedPerSession} a session, ` +
          `${INPUT_ROUND_LIMITS.parked} in all); answer those first`,
      )
    }
    const timer = setTimeout(() => {
      this.parked.delete(call.id)
      call.abandon('the client did not come back with its input in time')
    }, INPUT_ROUND_LIMITS.roundMs)
    timer.unref()
    this.parked.set(call.id, { call, timer })
  }

  /** The daemon stops: parked calls are cancelled. */
  dispose(): void {
    for (const { call, timer } of this.parked.values()) {
      clearTimeout(timer)
      call.abandon('the daemon is stopping')
    }
    this.parked.clear()
  }
}
