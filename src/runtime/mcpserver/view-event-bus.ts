import { AsyncLocalStorage } from 'node:async_hooks'
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server'
import type { Logger } from '../log/logger.js'
import { ownUri } from '../registry/unprefixed.js'
import { SessionView } from '../sessions/session-view.js'

/** The events a view can change: each is delivered only when the print of what that stream sees changed. */
type ListKind = Exclude<ServerEvent['kind'], 'resource_updated'>

/** Which list each change event is about. */
export const LIST_OF = {
  tools_list_changed: 'tools',
  prompts_list_changed: 'prompts',
  resources_list_changed: 'resources',
} as const satisfies Record<ListKind, string>

/** What a stream's view sees of one kind of list, as a string that is equal exactly when nothing visible changed. */
export type ViewPrints = (kind: ListKind, view: SessionView) => string

interface Listener {
  readonly deliver: (event: ServerEvent) => void
  readonly view: SessionView
  readonly last: Map<ListKind, string>
}

/** The session a subscriptions/listen request is served for, while the SDK opens its stream. */
const streamScope = new AsyncLocalStorage<SessionView>()

/** Serves `open` (the SDK's handling of one listen request) as a stream of the session that sees `view`. */
export function inStreamScope<T>(view: SessionView, open: () => T): T {
  return streamScope.run(view, open)
}

/**
 * The change events of `subscriptions/listen`, per session. The SDK owns
 * the streams (ack, subscription ids, filtering by what the client asked
 * for); it subscribes each stream to this bus while serving its listen
 * request, which runs inside `inStreamScope`, so each listener knows the
 * view of the session that opened it. A list_changed reaches a stream only
 * when what its own view sees of that list changed: another session's
 * connectors coming and going are not its news (issue 23).
 */
export class ViewEventBus implements ServerEventBus {
  private readonly listeners = new Set<Listener>()

  constructor(
    private readonly prints: ViewPrints,
    private readonly log: Logger,
    /** Whether a view sees the resource an update is about (another session's connector's is not its news). */
    private readonly sees: (uri: string, view: SessionView) => boolean = () => true,
  ) {}

  subscribe(deliver: (event: ServerEvent) => void): () => void {
    const view = streamScope.getStore() ?? SessionView.WHOLE
    const listener: Listener = { deliver, view, last: new Map() }
    // what the stream's session sees as it opens: a change is measured from here
    for (const kind of ['tools_list_changed', 'resources_list_changed', 'prompts_list_changed'] as const)
      listener.last.set(kind, this.prints(kind, view))
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  publish(event: ServerEvent): void {
    for (const listener of [...this.listeners]) {
      let delivered = event
      if (event.kind === 'resource_updated') {
        if (!this.sees(event.uri, listener.view)) continue
        // an unprefixed session subscribed under its connector's own URI, and hears of it so
        if (listener.view.unprefixed !== undefined) delivered = { ...event, uri: ownUri(event.uri) }
      } else {
        const print = this.prints(event.kind, listener.view)
        if (listener.last.get(event.kind) === print) continue
        listener.last.set(event.kind, print)
      }
      try {
        listener.deliver(delivered)
      } catch (err) {
        // one stream's failure must not keep the event from the others
        this.log.error('a listen stream failed to take a change event', { error: err, kind: event.kind })
      }
    }
  }

  get size(): number {
    return this.listeners.size
  }
}
