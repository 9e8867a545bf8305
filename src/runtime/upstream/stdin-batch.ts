import type { Writable } from 'node:stream'

/**
 * One ordered write queue for an upstream's stdin, written once per turn of
 * the event loop. Each write to the pipe wakes the server, which on a busy
 * machine takes the CPU from the daemon mid-turn: calls that arrived
 * together (16 HTTP requests read in one poll) went as 16 writes and 16
 * wake-ups. Batched, they go as one write; the server reads them at once.
 * A line waits at most until the loop's check phase (setImmediate), which
 * runs right after the I/O callbacks that queued it.
 */
export class StdinBatch {
  private lines: string[] = []
  private scheduled = false

  constructor(private readonly stdin: Writable) {}

  /** Queue one serialized message (with its newline). */
  push(line: string): void {
    this.lines.push(line)
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(this.flush)
  }

  /** Write what is queued now; the stream's answer (false: wait for 'drain'), true when nothing was queued. */
  readonly flush = (): boolean => {
    this.scheduled = false
    const lines = this.lines
    if (lines.length === 0 || this.stdin.destroyed) return true
    this.lines = []
    return this.stdin.write(lines.length === 1 ? lines[0]! : lines.join(''))
  }
}
