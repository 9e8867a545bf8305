import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { nestsDeeperThan } from '../registry/tool-table-limits.js'

/**
 * Newline-delimited JSON-RPC from an upstream's stdout, at a bounded cost
 * per byte. The SDK's ReadBuffer concatenates its whole buffer on every
 * chunk (quadratic for a large message) and skips non-JSON lines silently,
 * so a server spewing garbage keeps the daemon busy forever. Here a line
 * that cannot be JSON-RPC is rejected by its first character, and too many
 * of them in a window declare the connection broken.
 */
export const STDOUT_LIMITS = {
  /** Non-JSON-RPC lines tolerated per window (servers that log a banner to stdout keep working). */
  maxInvalidLines: 1_000,
  invalidWindowMs: 10_000,
  /**
   * Nesting of one message: JSON.parse takes any depth, but the SDK's
   * schema checks and JSON.stringify overflow the stack a few thousand
   * levels down. An answer past this becomes an error answer.
   */
  maxMessageDepth: 512,
} as const

export class StdoutBrokenError extends Error {}

/** An answer too deep to handle is answered as an error instead; anything else too deep is dropped. */
function tooDeep(message: JSONRPCMessage): JSONRPCMessage | undefined {
  const m = message as { id?: string | number; method?: string }
  if (m.id === undefined || m.method !== undefined) return undefined
  return {
    jsonrpc: '2.0',
    id: m.id,
    error: { code: -32603, message: `the upstream's answer nests deeper than ${STDOUT_LIMITS.maxMessageDepth} levels` },
  } as JSONRPCMessage
}

function isMessage(v: unknown): v is JSONRPCMessage {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false
  const m = v as Record<string, unknown>
  if (m.jsonrpc !== '2.0') return false
  return typeof m.method === 'string' || ('id' in m && ('result' in m || 'error' in m))
}

export class StdioMessageReader {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private invalid = 0
  private windowStart = Date.now()
  private firstInvalid?: string

  constructor(private readonly maxMessageBytes: number) {}

  /** The first line on stdout that was not JSON-RPC (at most 80 bytes), if any: what a server printed instead. */
  get firstNoise(): string | undefined {
    return this.firstInvalid
  }

  /** The messages completed by `chunk`. Throws when a message is too large or stdout is garbage. */
  push(chunk: Buffer): JSONRPCMessage[] {
    const out: JSONRPCMessage[] = []
    let start = 0
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl)
      start = nl + 1
      const line = this.pendingBytes ? Buffer.concat([...this.pending, piece]) : piece
      this.pending = []
      this.pendingBytes = 0
      if (line.length > this.maxMessageBytes)
        throw new StdoutBrokenError(`a message larger than ${this.maxMessageBytes} bytes`)
      const message = this.parse(line)
      if (message) out.push(message)
    }
    if (start < chunk.length) {
      this.pendingBytes += chunk.length - start
      if (this.pendingBytes > this.maxMessageBytes)
        throw new StdoutBrokenError(`a message larger than ${this.maxMessageBytes} bytes`)
      this.pending.push(chunk.subarray(start))
    }
    return out
  }

  private parse(line: Buffer): JSONRPCMessage | undefined {
    let i = 0
    while (i < line.length && (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0d)) i++
    if (i === line.length) return undefined
    if (line[i] === 0x7b /* { */) {
      try {
        const value: unknown = JSON.parse(line.toString('utf8'))
        // a message that short cannot nest that deep: the walk is skipped on the hot path
        if (isMessage(value))
          return line.length > 2 * STDOUT_LIMITS.maxMessageDepth &&
            nestsDeeperThan(value, STDOUT_LIMITS.maxMessageDepth)
            ? tooDeep(value)
            : value
      } catch {
        // counted below, like any other line that is not JSON-RPC
      }
    }
    this.countInvalid(line)
    return undefined
  }

  private countInvalid(line: Buffer): void {
    const now = Date.now()
    if (now - this.windowStart > STDOUT_LIMITS.invalidWindowMs) {
      this.windowStart = now
      this.invalid = 0
    }
    this.firstInvalid ??= line.subarray(0, 80).toString('utf8').trim()
    if (++this.invalid > STDOUT_LIMITS.maxInvalidLines) {
      throw new StdoutBrokenError(
        `more than ${STDOUT_LIMITS.maxInvalidLines} lines on stdout ` +
          `that are not JSON-RPC within ${STDOUT_LIMITS.invalidWindowMs / 1000} s (first: "${this.firstInvalid}")`,
      )
    }
  }
}
