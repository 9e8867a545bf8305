import type { Writable } from 'node:stream'
import { BRIDGE_LIMITS } from '../http-surface/http-limits.js'

/**
 * The answers the client has not read yet: stdout's queue. Past
 * `unreadAnswerBytes` the bridge takes no more of stdin (intake.ts) and
 * reads no more of the daemon's answers, which wait in their sockets (and
 * the daemon's own per-session cap), until the client reads and stdout
 * drains: a client that never reads costs the bridge that much at most.
 */
export class StdoutBacklog {
  private waiting: Array<() => void> = []

  constructor(private readonly output: Writable) {
    output.on('drain', () => {
      if (this.waiting.length === 0) return
      const ready = this.waiting
      this.waiting = []
      for (const resume of ready) resume()
    })
  }

  get full(): boolean {
    return this.output.writableLength > BRIDGE_LIMITS.unreadAnswerBytes
  }

  get unread(): number {
    return this.output.writableLength
  }

  /** `resume` once stdout has drained (a full queue always drains: a write past its mark was refused). */
  onDrain(resume: () => void): void {
    this.waiting.push(resume)
  }

  onEveryDrain(listener: () => void): void {
    this.output.on('drain', listener)
  }
}
