/**
 * Why a tools/call should end early, without an AbortSignal until a callee
 * asks for one. Almost no call is ever cancelled, yet an AbortSignal per
 * call, its listeners and (for a 2025-era call, which a later
 * `notifications/cancelled` may end) AbortSignal.any cost ~30-45 µs of a
 * ~100 µs call. A direct upstream call listens with `onCancel`; a callee
 * that takes a signal (the SDK client of an HTTP upstream) gets one made on
 * first use, already aborted if the call was cancelled before.
 */
export class CallCancel {
  private listeners?: Array<(reason: unknown) => void>
  private controller?: AbortController
  private why: unknown
  private done = false

  /** A cancel that follows `signal`: the SDK server's own per-request signal. */
  static following(signal: AbortSignal): CallCancel {
    const cancel = new CallCancel()
    if (signal.aborted) cancel.cancel(signal.reason)
    else signal.addEventListener('abort', () => cancel.cancel(signal.reason), { once: true })
    return cancel
  }

  get cancelled(): boolean {
    return this.done
  }

  get reason(): unknown {
    return this.why
  }

  /** Once: later calls change nothing. */
  cancel(reason: unknown): void {
    if (this.done) return
    this.done = true
    this.why = reason
    this.controller?.abort(reason)
    const listeners = this.listeners
    this.listeners = undefined
    if (listeners) for (const listener of listeners) listener(reason)
  }

  /** `listener` runs once, when the call is cancelled; the returned function takes it back. */
  onCancel(listener: (reason: unknown) => void): () => void {
    if (this.done) {
      listener(this.why)
      return () => {}
    }
    this.listeners ??= []
    this.listeners.push(listener)
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1
      if (at >= 0) this.listeners!.splice(at, 1)
    }
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.done) this.controller.abort(this.why)
    }
    return this.controller.signal
  }
}
