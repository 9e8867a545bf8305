import type { CallRelay } from '../registry/call-relay.js'

/**
 * Which session's request a message from an upstream belongs to: a request
 * it sends (elicitation, sampling, roots), a log message. The rule never
 * crosses sessions (docs/decisions/server-request-relay.md):
 *
 * 1. Over HTTP, a message that arrives on a call's own stream (2025 era) or
 *    inside its input_required rounds (2026-07-28, fulfilled by the SDK
 *    client within the call) runs in that call's async context: it is that
 *    call's, if the call is still in flight on this connection.
 * 2. Otherwise (stdio has one stream for everything, and nothing in a
 *    server request names the request it serves): it belongs to the one
 *    session that has requests in flight on this connection. Within it:
 *    a. the request the upstream's previous request went to, when tutti has
 *       sent the upstream nothing since (`burst`): nothing new can have
 *       caused it, and an SDK v2 server sends one round's requests to a
 *       2025 client concurrently, about a millisecond apart;
 *    b. else the oldest that is not waiting for its client's answer (an
 *       upstream that asks again while one request waits is most likely
 *       serving another call: a 2026-07-28 client may leave a round
 *       unanswered), else the oldest.
 *    If no session has, or several have, nobody is asked: the upstream gets
 *    an error rather than a guess. A request waiting for an answer still
 *    counts as its session's: no other session is ever guessed.
 */
export type Association = { relay: CallRelay } | { refused: string }

export function associate(
  context: CallRelay | undefined,
  trustContext: boolean,
  inFlight: Iterable<CallRelay>,
  burst?: CallRelay,
): Association {
  let first: CallRelay | undefined
  let firstFree: CallRelay | undefined
  let inFlightContext = false
  let inFlightBurst = false
  let several = false
  for (const relay of inFlight) {
    if (relay === context) inFlightContext = true
    if (relay === burst) inFlightBurst = true
    if (!first) first = relay
    else if (relay.session !== first.session) several = true
    if (!firstFree && !relay.awaitingClient?.()) firstFree = relay
  }
  if (trustContext && context && inFlightContext) return { relay: context }
  if (!first) return { refused: 'no request of any session is in flight on this connection' }
  if (several)
    return {
      refused:
        'requests of several sessions are in flight on this connection, and the message does not say which it serves',
    }
  return { relay: inFlightBurst ? burst! : (firstFree ?? first) }
}
