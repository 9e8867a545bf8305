/**
 * MCP's stdio framing: one JSON-RPC message per line. A line longer than
 * the daemon would take as a body (its 4 MiB limit, and some room) is not
 * kept in memory: it is reported as oversized and skipped to its end.
 */
export const MAX_LINE_BYTES = 5 * 1024 * 1024

export type Line = { kind: 'line'; bytes: Buffer } | { kind: 'oversized' }

const NL = 0x0a
const CR = 0x0d

export class LineSplitter {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private skipping = false

  constructor(private readonly maxBytes = MAX_LINE_BYTES) {}

  /** The complete lines in `chunk` (with what came before it), in order. */
  push(chunk: Buffer): Line[] {
    const out: Line[] = []
    let start = 0
    for (let nl = chunk.indexOf(NL); nl >= 0; nl = chunk.indexOf(NL, start)) {
      this.take(chunk.subarray(start, nl), out, true)
      start = nl + 1
    }
    if (start < chunk.length) this.take(chunk.subarray(start), out, false)
    return out
  }

  private take(part: Buffer, out: Line[], complete: boolean): void {
    if (!this.skipping && this.pendingBytes + part.length > this.maxBytes) {
      this.skipping = true
      this.pending = []
      this.pendingBytes = 0
      out.push({ kind: 'oversized' })
    }
    if (this.skipping) {
      if (complete) this.skipping = false
      return
    }
    if (!complete) {
      this.pending.push(part)
      this.pendingBytes += part.length
      return
    }
    let line = this.pending.length ? Buffer.concat([...this.pending, part]) : part
    this.pending = []
    this.pendingBytes = 0
    if (line.length && line[line.length - 1] === CR) line = line.subarray(0, -1)
    // blank lines carry no message (some clients end with one)
    if (line.some((b) => b !== 0x20 && b !== 0x09)) out.push({ kind: 'line', bytes: line })
  }
}
