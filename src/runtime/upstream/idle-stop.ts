import { LiveTasks } from './live-tasks.js'
import type { UpstreamLink } from './upstream-link.js'

/** What the idle stop needs of the supervisor whose lazy upstream it stops. */
export interface IdleOwner {
  /** The open connection while no call is in flight, else undefined. */
  idleConnection(): UpstreamLink | undefined
  /** The idle connection has closed. */
  closed(conn: UpstreamLink): void
  /** Reported after the close: the next call starts the upstream again. */
  stopped(): void
}

/**
 * A lazy upstream's idle period. One timer per idle period, not one per call: a
 * call only moves `lastUse`, and an early timer sleeps on. The idle upstream is
 * closed before it is reported stopped: until then it is still running (its
 * process may take the close grace), and a call that comes meanwhile waits for
 * the close, then starts anew.
 */
export class IdleStop {
  private timer?: NodeJS.Timeout
  /** When the last call ended (or the upstream started): the idle clock, read only when the timer fires. */
  lastUse = 0
  /** An idle upstream being closed. */
  closing?: Promise<void>
  /** Tasks live on a connection keep it from being idle, as calls in flight do; the last one to end re-arms it. */
  readonly tasks = new LiveTasks(() => {
    this.lastUse = Date.now()
    this.arm()
  })

  constructor(
    private readonly idleMs: number,
    private readonly owner: IdleOwner,
  ) {}

  /** Starts the idle period, unless one is running (or there is none: `idleMs` 0). */
  arm(): void {
    if (this.timer || this.idleMs <= 0) return
    if (!this.lastUse) this.lastUse = Date.now()
    this.schedule(this.idleMs)
  }

  cancel(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined
      // calls in flight re-arm it when the last one ends, live tasks when the last one stops counting
      if (!this.idleConnection()) return
      const idleFor = Date.now() - this.lastUse
      if (idleFor < this.idleMs) this.schedule(this.idleMs - idleFor)
      else void this.stop()
    }, ms)
    this.timer.unref()
  }

  /** The connection, when it is idle: no call in flight, no live task. */
  private idleConnection(): UpstreamLink | undefined {
    const conn = this.owner.idleConnection()
    return conn && !this.tasks.holds(conn) ? conn : undefined
  }

  private async stop(): Promise<void> {
    const conn = this.idleConnection()
    if (!conn || this.closing) return
    this.closing = conn.close().then(() => {
      this.owner.closed(conn)
      this.closing = undefined
    })
    await this.closing
    this.owner.stopped()
  }
}
