import type { Logger } from '../log/logger.js'

/** Updates of one URI within this window are one notice. */
const UPDATE_COALESCE_MS = 100
/** Distinct URIs a window holds: an upstream that floods more loses the rest of that window's (logged). */
const MAX_PENDING_URIS = 1_000

/**
 * notifications/resources/updated from the upstreams, on their way to the
 * listen streams that subscribed to those URIs: bounded, so that an
 * upstream flooding updates costs each stream at most one notice per URI
 * per window, and the daemon at most MAX_PENDING_URIS URIs held at once.
 */
export class ResourceUpdates {
  private readonly pending = new Set<string>()
  private dropped = 0
  private timer?: NodeJS.Timeout

  constructor(
    private readonly notify: (uri: string) => void,
    private readonly log: Logger,
    private readonly windowMs = UPDATE_COALESCE_MS,
    private readonly maxPending = MAX_PENDING_URIS,
  ) {}

  /** `uri` as the connector server serves it. */
  updated(uri: string): void {
    if (!this.pending.has(uri)) {
      if (this.pending.size >= this.maxPending) {
        this.dropped++
        return
      }
      this.pending.add(uri)
    }
    this.timer ??= setTimeout(() => this.flush(), this.windowMs)
  }

  private flush(): void {
    this.timer = undefined
    const uris = [...this.pending]
    this.pending.clear()
    if (this.dropped) {
      this.log.warn('resource updates dropped: more distinct URIs changed than one window holds', {
        dropped: this.dropped,
        max: this.maxPending,
      })
      this.dropped = 0
    }
    for (const uri of uris) this.notify(uri)
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending.clear()
  }
}
