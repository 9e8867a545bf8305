import { readMessages } from './answer-stream.js'
import type { DaemonHttp } from './daemon-http.js'
import type { DaemonLink, Link } from './daemon-link.js'

export interface ListenRelayOptions {
  /** The `subscriptions/listen` request as the client sent it (or as the bridge wrote it for its own watch). */
  readonly bytes: Buffer
  readonly id: string | number
  readonly headers: Record<string, string>
  readonly http: DaemonHttp
  readonly link: DaemonLink
  /** A message of the stream, to pass on: the acknowledgement (the first time only), then notifications. */
  onMessage(payload: string): void
  /** Reopened after a loss: changes while it was gone were not seen, so the client should list again. */
  onReopened(): void
  /** The stream ended without the client asking: the daemon stopped, crashed, or revoked the token. */
  onLost(link: Link): void
  /** It is over for good (cancelled, refused, or it honoured nothing): nothing more will come of it. */
  onEnded?(): void
}

type Parsed = { method?: string; id?: unknown; result?: unknown; params?: { notifications?: Record<string, unknown> } }

/**
 * A `subscriptions/listen` held open at the daemon on the client's behalf.
 * Its stream's messages pass through as they are; when the stream is lost
 * it is opened again on the bridge's next link, the second acknowledgement
 * is not passed on (the client has its subscription), and the client is
 * told to list again: it never sees the daemon go.
 */
export class ListenRelay {
  private readonly abort = new AbortController()
  private acknowledged?: Record<string, unknown>
  private opened = false
  private current?: Link
  private finished = false
  private readonly unlink: () => void

  constructor(private readonly options: ListenRelayOptions) {
    this.unlink = options.link.onLinked((link) => void this.open(link))
  }

  /** Honoured filter of the first acknowledgement (undefined until it came). */
  get honoured(): Record<string, unknown> | undefined {
    return this.acknowledged
  }

  start(): void {
    const link = this.options.link.link
    if (link) this.open(link)
  }

  /** The client cancelled it, or the bridge ends: nothing more is passed on. */
  cancel(): void {
    this.finish()
    this.abort.abort()
  }

  private finish(): void {
    if (this.finished) return
    this.finished = true
    this.unlink()
    this.options.onEnded?.()
  }

  private async open(link: Link): Promise<void> {
    if (this.finished || this.current === link) return
    this.current = link
    const reopening = this.opened
    this.opened = true
    const ex = await this.options.http.post(link, this.options.headers, this.options.bytes, this.abort.signal)
    if (this.finished) return
    if (ex.kind !== 'answer') return this.lost(link)
    if (ex.status === 401) {
      ex.response.resume()
      return this.lost(link)
    }
    let graceful = false
    let first = true
    const onMessage = (payload: string): void | 'stop' => {
      if (this.finished) return 'stop'
      const parsed = parse(payload)
      if (first && parsed?.method === 'notifications/subscriptions/acknowledged') {
        first = false
        if (reopening) return this.options.onReopened()
        this.acknowledged = parsed.params?.notifications ?? {}
      } else if (parsed && parsed.id === this.options.id && 'result' in parsed) {
        // the daemon ends every stream with a result when it stops; one that honoured nothing ends at once, for good
        graceful = true
        if (this.acknowledged && Object.keys(this.acknowledged).length > 0) return 'stop'
        this.finish()
      } else if (parsed && parsed.id === this.options.id) {
        // refused (an error answer, such as a cap of the daemon's): the subscription never started, or, on
        // reopening, ends here; taking it for the daemon's loss would relink again and again
        this.finish()
      }
      first = false
      this.options.onMessage(payload)
      return this.finished ? 'stop' : undefined
    }
    try {
      await readMessages(ex.response, ex.contentType, onMessage)
    } catch {
      // cut off: the daemon went away
    }
    if (this.finished) return
    if (!graceful || this.acknowledged) this.lost(link)
  }

  private lost(link: Link): void {
    if (this.current === link) this.current = undefined
    this.options.onLost(link)
    // a newer link may be there already (another stream noticed first)
    const now = this.options.link.link
    if (now && now !== link) void this.open(now)
  }
}

function parse(payload: string): Parsed | undefined {
  try {
    const v = JSON.parse(payload) as unknown
    return v && typeof v === 'object' ? (v as Parsed) : undefined
  } catch {
    // not JSON: no message this relay acts on; the payload is passed on as it is
    return undefined
  }
}
