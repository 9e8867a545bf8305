import type { Readable } from 'node:stream'
import { BRIDGE_LIMITS } from '../http-surface/http-limits.js'
import type { Line } from './line-splitter.js'
import type { StdoutBacklog } from './stdout-backlog.js'

/** What the client sent that is still being forwarded or answered. */
export interface BridgeLoad {
  readonly inFlight: number
  readonly inFlightBytes: number
}

export interface IntakeOptions {
  readonly input: Readable
  readonly backlog: StdoutBacklog
  readonly load: BridgeLoad
  /** One line for the bridge, in the order the client wrote it. */
  take(line: Line): void
  /** A diagnostic line for the client's log (stderr). */
  log(line: string): void
}

/**
 * What the bridge takes from stdin, and when it stops taking: a client that
 * writes requests and never reads the answers must cost the bridge (and the
 * daemon) no more than the caps. Lines are handed on while fewer than
 * `requestsInFlight` (of `requestBytesInFlight` bytes) are being answered
 * and the client's unread answers are under their mark; past any, stdin is
 * paused (the client's writes wait in the pipe), and the rest of the chunk
 * already read waits here, until an answer goes out or stdout drains.
 * Nothing is dropped or refused.
 */
export class Intake {
  private waiting: Line[] = []
  private head = 0
  private reading = true
  private warnTimer?: NodeJS.Timeout
  private readonly idleWaiters: Array<() => void> = []

  constructor(private readonly options: IntakeOptions) {
    options.backlog.onEveryDrain(() => this.flow())
  }

  /** The lines of one chunk of stdin. */
  push(lines: Line[]): void {
    for (const line of lines) {
      if (this.head < this.waiting.length || !this.room()) this.waiting.push(line)
      else this.options.take(line)
    }
    if (this.head < this.waiting.length || !this.room()) this.hold()
  }

  /** Room again, perhaps (a request settled, stdout drained): what waits first, then stdin again. */
  flow(): void {
    while (this.head < this.waiting.length && this.room()) this.options.take(this.waiting[this.head++]!)
    if (this.head > 0 && this.head === this.waiting.length) {
      this.waiting = []
      this.head = 0
    }
    if (this.warnTimer && !this.options.backlog.full) this.stopWarning()
    // no room: something still waits, or stdin is read no further
    if (!this.room()) return this.hold()
    if (!this.reading) {
      this.reading = true
      this.options.input.resume()
    }
    if (this.options.load.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  /** Resolves once nothing waits here and nothing is being answered (at stdin's end: the answers still due). */
  idle(): Promise<void> {
    if (this.waiting.length === 0 && this.options.load.inFlight === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  close(): void {
    this.stopWarning()
  }

  private room(): boolean {
    const { load, backlog } = this.options
    if (backlog.full || load.inFlight >= BRIDGE_LIMITS.requestsInFlight) return false
    return load.inFlight === 0 || load.inFlightBytes < BRIDGE_LIMITS.requestBytesInFlight
  }

  /** stdin is read no further, and a backlog that lasts is told. */
  private hold(): void {
    if (this.reading) {
      this.reading = false
      this.options.input.pause()
    }
    if (this.options.backlog.full && !this.warnTimer) {
      // a client that stopped reading (hung, or one that never reads) is worth a line in its log, once per spell
      this.warnTimer = setTimeout(() => {
        const unread = `${BRIDGE_LIMITS.unreadWarnMs / 1000} s (${this.options.backlog.unread} bytes unread)`
        const what = 'no more requests are read from stdin until it does'
        this.options.log(`tutti session bridge: the client has not read its answers for ${unread}; ${what}`)
      }, BRIDGE_LIMITS.unreadWarnMs)
      this.warnTimer.unref()
    }
  }

  private stopWarning(): void {
    clearTimeout(this.warnTimer)
    this.warnTimer = undefined
  }
}
