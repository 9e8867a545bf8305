import type { Logger } from '../log/logger.js'
import type { SessionView } from '../sessions/session-view.js'
import type { ResourceService } from './resource-service.js'

/**
 * The daemon's resources/subscribe at each upstream, for the 2026-07-28
 * listen streams that ask for a URI's updates: one upstream subscription
 * per resource (its connector and its own URI, however sessions name it)
 * however many streams want it, ended when the last of them does.
 */
export class UpstreamSubscriptions {
  private readonly count = new Map<string, number>()

  constructor(
    private readonly resources: ResourceService,
    private readonly log: Logger,
  ) {}

  /** The stream's URIs are held until the returned release is called (its stream ended). */
  hold(uris: readonly string[], view: SessionView): () => void {
    const held = new Map<string, string>()
    for (const uri of uris) {
      const owner = this.resources.owner(uri, view)
      if (owner) held.set(`${owner.key}\n${owner.uri}`, uri)
    }
    for (const [resource, uri] of held) {
      const n = this.count.get(resource) ?? 0
      this.count.set(resource, n + 1)
      if (n === 0) this.relay('resources/subscribe', uri, view)
    }
    let released = false
    return () => {
      if (released) return
      released = true
      for (const [resource, uri] of held) {
        const n = (this.count.get(resource) ?? 1) - 1
        if (n > 0) this.count.set(resource, n)
        else {
          this.count.delete(resource)
          this.relay('resources/unsubscribe', uri, view)
        }
      }
    }
  }

  private relay(method: 'resources/subscribe' | 'resources/unsubscribe', uri: string, view: SessionView): void {
    this.resources.subscription(method, uri, view).catch((err: unknown) =>
      // the stream stays open: it simply hears of no update of that URI, and the log says why
      this.log.warn(`${method} at the upstream failed`, { uri, error: err }),
    )
  }
}
