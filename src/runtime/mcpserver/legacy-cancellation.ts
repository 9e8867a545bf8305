/**
 * 2025-era clients cancel a call with a separate `notifications/cancelled`
 * POST. The SDK's stateless fallback serves that POST on a fresh server, so
 * it never reaches the running call; this table does: calls register under
 * (session, request id) and the cancel aborts them. The session is its
 * token's hash: unique, where a workspace and a session name joined by any
 * separator are not.
 */
export class LegacyCancellation {
  private readonly inFlight = new Map<string, AbortController>()

  private static key(session: string, id: unknown): string {
    return `${session}\0${typeof id}:${String(id)}`
  }

  register(session: string, id: unknown): { signal: AbortSignal; done: () => void } {
    const key = LegacyCancellation.key(session, id)
    const controller = new AbortController()
    this.inFlight.set(key, controller)
    return {
      signal: controller.signal,
      done: () => {
        if (this.inFlight.get(key) === controller) this.inFlight.delete(key)
      },
    }
  }

  cancel(session: string, id: unknown, reason: string): boolean {
    const controller = this.inFlight.get(LegacyCancellation.key(session, id))
    if (!controller) return false
    controller.abort(new Error(reason))
    return true
  }

  get size(): number {
    return this.inFlight.size
  }
}
