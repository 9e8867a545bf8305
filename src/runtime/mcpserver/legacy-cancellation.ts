import { CallCancel } from '../registry/call-cancel.js'

/**
 * 2025-era clients cancel a call with a separate `notifications/cancelled`
 * POST. The SDK's stateless fallback serves that POST on a fresh server, so
 * it never reaches the running call; this table does: calls register under
 * (session, request id) and the cancel aborts them. The session is its
 * token's hash: unique, where a workspace and a session name joined by any
 * separator are not.
 */
export class LegacyCancellation {
  private readonly inFlight = new Map<string, CallCancel>()

  private static key(session: string, id: unknown): string {
    return `${session}\0${typeof id}:${String(id)}`
  }

  /** The call's own cancel is what a `notifications/cancelled` ends: no second signal to merge. */
  register(session: string, id: unknown, cancel: CallCancel = new CallCancel()): { cancel: CallCancel; readonly signal: AbortSignal; done: () => void } {
    const key = LegacyCancellation.key(session, id)
    this.inFlight.set(key, cancel)
    return {
      cancel,
      get signal() {
        return cancel.signal
      },
      done: () => {
        if (this.inFlight.get(key) === cancel) this.inFlight.delete(key)
      },
    }
  }

  cancel(session: string, id: unknown, reason: string): boolean {
    const cancel = this.inFlight.get(LegacyCancellation.key(session, id))
    if (!cancel) return false
    cancel.cancel(new Error(reason))
    return true
  }

  get size(): number {
    return this.inFlight.size
  }
}
