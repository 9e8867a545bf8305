import type { Client } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'

type Subscription = Awaited<ReturnType<Client['listen']>>
type Filter = Parameters<Client['listen']>[0]

/** How a 2026-07-28 link keeps its `subscriptions/listen` stream, named once. */
export const LISTEN_LIMITS = {
  /** Waits before opening a stream again that the upstream dropped, one more each time; then the last, again. */
  reopenMs: [250, 1_000, 5_000, 30_000],
  /** Resources one link listens to: as many as a session may subscribe to over all connectors. */
  maxResources: 1_000,
  /** A stream not acknowledged by then is given up (and tried again): it must not hold up a connect. */
  ackMs: 10_000,
} as const

/**
 * What a 2025 link gets unasked, a 2026-07-28 link has to listen for
 * (SEP-2575): list changes and resource updates arrive on one
 * `subscriptions/listen` request, whose filter names the lists the upstream
 * says change and the resources the daemon subscribed to. The SDK delivers
 * what arrives on it to the client's notification handlers, as on a 2025
 * link. resources/subscribe and unsubscribe become a new filter: the new
 * stream is acknowledged before the old one is closed, so no update falls
 * between them. A stream the upstream drops is opened again (backoff), and
 * the lists are read again since something may have changed meanwhile.
 */
export class UpstreamListen {
  private current?: Subscription
  private readonly resources = new Set<string>()
  /** One change of stream at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve()
  private closed = false
  private drops = 0

  constructor(
    private readonly client: Client,
    /** Something may have changed that no notification said: a dropped stream is open again. */
    private readonly missed: () => void,
  ) {}

  /** The first stream, at connect (none when the upstream declares nothing that changes); one refused is retried. */
  async open(): Promise<void> {
    try {
      await this.change(() => undefined)
    } catch (err) {
      this.reopenLater()
      throw err
    }
  }

  /** resources/subscribe at this upstream: acknowledged once the stream with it is. */
  subscribe(uri: string): Promise<void> {
    return this.change(() => {
      if (!this.resources.has(uri) && this.resources.size >= LISTEN_LIMITS.maxResources)
        throw new TuttiError(
          ErrorCodes.UPSTREAM_FAILED,
          `more than ${LISTEN_LIMITS.maxResources} resources subscribed at this upstream`,
        )
      this.resources.add(uri)
    })
  }

  unsubscribe(uri: string): Promise<void> {
    return this.change(() => this.resources.delete(uri))
  }

  /** resources/subscribe or unsubscribe as relayed to this upstream: the empty result once the stream is acked. */
  async relay(method: 'resources/subscribe' | 'resources/unsubscribe', uri: string): Promise<Record<string, never>> {
    await (method === 'resources/subscribe' ? this.subscribe(uri) : this.unsubscribe(uri))
    return {}
  }

  /** The connection is closing: the stream ends with it, and is not opened again. */
  close(): void {
    this.closed = true
    // a stream whose close fails is gone with its connection anyway
    void this.current?.close().catch(() => undefined)
    this.current = undefined
  }

  private change(edit: () => void): Promise<void> {
    const next = this.queue.then(async () => {
      edit()
      await this.relisten()
    })
    // a failed change fails its caller only; the next one starts from the stream still open
    this.queue = next.catch(() => undefined)
    return next
  }

  private async relisten(): Promise<void> {
    if (this.closed) return
    const filter = this.filter()
    const previous = this.current
    const next = filter ? await this.client.listen(filter, { timeout: LISTEN_LIMITS.ackMs }) : undefined
    if (this.closed) {
      // opened while the connection closed: it goes with the connection if it cannot be closed itself
      void next?.close().catch(() => undefined)
      return
    }
    this.current = next
    if (next) void next.closed.then((how) => this.ended(next, how))
    // the new stream hears everything from now on; an old one that will not close only repeats it
    await previous?.close().catch(() => undefined)
  }

  /** A stream that ended: the upstream dropped it (or closed it gracefully) while it was the one in use. */
  private ended(stream: Subscription, how: Awaited<Subscription['closed']>): void {
    if (how === 'local' || stream !== this.current || this.closed) return
    this.current = undefined
    this.reopenLater()
  }

  /** Opens the stream again after a wait that grows with each failure, and has the lists read again then. */
  private reopenLater(): void {
    if (this.closed) return
    const wait = LISTEN_LIMITS.reopenMs[Math.min(this.drops++, LISTEN_LIMITS.reopenMs.length - 1)]!
    const timer = setTimeout(() => {
      this.change(() => undefined).then(
        () => {
          this.drops = 0
          this.missed()
        },
        () => this.reopenLater(),
      )
    }, wait)
    timer.unref()
  }

  /** What to listen for: the lists the upstream says change, and the resources subscribed. */
  private filter(): Filter | undefined {
    const caps = this.client.getServerCapabilities() ?? {}
    const filter: Filter = {}
    if (caps.tools?.listChanged) filter.toolsListChanged = true
    if (caps.prompts?.listChanged) filter.promptsListChanged = true
    if (caps.resources?.listChanged) filter.resourcesListChanged = true
    if (this.resources.size) filter.resourceSubscriptions = [...this.resources]
    return Object.keys(filter).length ? filter : undefined
  }
}
