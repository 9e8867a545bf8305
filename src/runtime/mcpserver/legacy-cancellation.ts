import type { CallCancel } from '../registry/call-cancel.js'

/**
 * 2025-era clients cancel a call with a separate `notifications/cancelled`
 * POST. The SDK's stateless fallback serves that POST on a fresh server, so
 * it never reaches the running call; this table does: calls register under
 * (session, request id) and the cancel aborts them. The session is its
 * token's hash: unique, where a workspace and a session name joined by any
 * separator are not.
 */
export class LegacyCancellation {
  /**
   * By session, then by request id: a Map keeps 1 and "1" apart, as JSON-RPC does, with no key string built per call.
   */
  private readonly inFlight = new Map<string, Map<unknown, CallCancel>>()

  /** The call's own cancel is what a `notifications/cancelled` ends; `done` forgets it when the call ends. */
  register(session: string, id: unknown, cancel: CallCancel): { done: () => void } {
    let calls = this.inFlight.get(session)
    if (!calls) {
      calls = new Map()
      this.inFlight.set(session, calls)
    }
    calls.set(id, cancel)
    return {
      done: () => {
        const now = this.inFlight.get(session)
        if (now?.get(id) !== cancel) return
        now.delete(id)
        if (now.size === 0) this.inFlight.delete(session)
      },
    }
  }

  cancel(session: string, id: unknown, reason: string): boolean {
    const cancel = this.inFlight.get(session)?.get(id)
    if (!cancel) return false
    // a plain Error as the abort reason: the SDK sends String(reason) upstream ('Error: …'), and a cancelled call's
    // answer gets the connector's name only for an error that is not a TuttiError (tool-service.ts)
    cancel.cancel(new Error(reason))
    return true
  }

  /** Calls that a cancel could still reach, over all sessions. */
  get size(): number {
    let n = 0
    for (const calls of this.inFlight.values()) n += calls.size
    return n
  }
}
