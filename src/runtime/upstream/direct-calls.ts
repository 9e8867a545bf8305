import { ProtocolError, SdkError, SdkErrorCode, type Client, type JSONRPCMessage } from '@modelcontextprotocol/client'
import type { RouteCallOptions, ToolCallResult } from '../registry/route.js'
import { answerKind, isCanonicalCallResult } from './call-answer.js'
import type { ProcessGroupStdioTransport } from './stdio-transport.js'

/**
 * tools/call on a stdio upstream without the SDK client's request
 * machinery: the request is written under an id of its own, and the answer
 * is taken off the stream before the SDK client sees it. The SDK client
 * spent ~80 µs a call on what the route already guarantees (a method check
 * that builds a failing zod error, the result schema, an AbortSignal
 * listener, its response bookkeeping). What it would have decided is
 * decided the same way here: the same request bytes, the same routing of
 * answers (call-answer.ts), the same errors for a JSON-RPC error, a timeout,
 * a cancel and a closed connection. A result the SDK would not hand back
 * exactly as it came is decoded by the SDK client itself (`decodeBySdk`).
 * Everything else (initialize, tools/list, notifications, requests from the
 * server) stays with the SDK client.
 */

/**
 * Direct call ids: far above the SDK client's own counter (from 0, a few requests a connection), inside int32 for
 * servers that keep ids as 32-bit integers.
 */
export const DIRECT_CALL_IDS = { first: 2 ** 30, last: 2 ** 31 - 1 } as const

/** The 2025-era revisions, whose tools/call answer the SDK decodes with the schema call-answer.ts mirrors. */
export const DIRECT_CALL_REVISIONS: ReadonlySet<string> = new Set([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
])

/** Names the SDK client's replay of one answer (decodeBySdk); never written to the upstream. */
const REPLAY_PREFIX = '\u0000tutti-replay:'

interface Pending {
  settle(kind: 'result' | 'error', message: JSONRPCMessage): void
  fail(error: Error): void
}

export class DirectCalls {
  private readonly pending = new Map<number, Pending>()
  private nextId: number = DIRECT_CALL_IDS.first
  private readonly replays = new Map<number, Record<string, unknown>>()
  private nextReplay = 0

  constructor(
    private readonly transport: ProcessGroupStdioTransport,
    private readonly client: Client,
    private readonly timeoutMs: number,
    /** A 2026-07-28 link: the `_meta` envelope the SDK client puts on each of its requests (raw-requests.ts). */
    private readonly envelope?: Record<string, unknown>,
  ) {
    const before = transport.intercept
    transport.intercept = (message) => this.take(message) || (before?.(message) ?? false)
    transport.answerLocally = (message) => this.replay(message)
  }

  get inFlight(): number {
    return this.pending.size
  }

  call(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    options: RouteCallOptions,
  ): Promise<ToolCallResult> {
    // a caller's CallCancel is listened to as it is: no AbortSignal is made for the call
    const callCancel = options.cancel
    const signal = callCancel ? undefined : options.signal
    // as the SDK does: a call already cancelled is not sent
    if (callCancel?.cancelled) return Promise.reject(asCancel(callCancel.reason))
    if (signal?.aborted) return Promise.reject(asCancel(signal.reason))
    return new Promise<ToolCallResult>((resolve, reject) => {
      const id = this.allocate()
      let unlisten: (() => void) | undefined
      const done = (): void => {
        this.pending.delete(id)
        clearTimeout(timer)
        unlisten?.()
      }
      const cancel = (reason: unknown): void => {
        if (!this.pending.has(id)) return
        done()
        // a cancel that cannot be written has nobody to reach: the process is gone
        const envelope = this.envelope ? { _meta: this.envelope } : {}
        const cancelled = {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: String(reason), ...envelope },
        }
        this.transport.writeLine(`${JSON.stringify(cancelled)}\n`)
        reject(asCancel(reason))
      }
      const timer = setTimeout(
        () => cancel(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: this.timeoutMs })),
        this.timeoutMs,
      )
      unlisten = callCancel ? callCancel.onCancel(cancel) : signal ? listen(signal, cancel) : undefined
      this.pending.set(id, {
        settle: (kind, message) => {
          done()
          if (kind === 'error') {
            const {
              code,
              message: text,
              data,
            } = (message as { error: { code: number; message: string; data?: unknown } }).error
            reject(ProtocolError.fromError(code, text, data))
            return
          }
          const result = (message as { result: Record<string, unknown> }).result
          const decoded = this.envelope ? completed(result) : result
          if (decoded && isCanonicalCallResult(decoded)) resolve(decoded as ToolCallResult)
          else this.decodeBySdk(result).then(resolve, reject)
        },
        fail: (error) => {
          done()
          reject(error)
        },
      })
      // the SDK client's own serialization of the same request: the upstream sees the same bytes but the id; on a
      // 2026-07-28 link its envelope first, the call's own `_meta` over it (as the SDK merges them)
      const sent = this.envelope ? { ...params, _meta: { ...this.envelope, ...params._meta } } : params
      const line = `${JSON.stringify({ method: 'tools/call', params: sent, jsonrpc: '2.0', id })}\n`
      if (!this.transport.writeLine(line)) {
        done()
        reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'))
      }
    })
  }

  /** The connection closed: every call in flight fails as the SDK fails its own. */
  connectionClosed(): void {
    const error = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed')
    for (const pending of [...this.pending.values()]) pending.fail(error)
  }

  private allocate(): number {
    const id = this.nextId
    this.nextId = id === DIRECT_CALL_IDS.last ? DIRECT_CALL_IDS.first : id + 1
    return id
  }

  /**
   * An answer to a direct call, routed as the SDK routes answers (by Number(id)); anything else is the SDK client's.
   */
  private take(message: JSONRPCMessage): boolean {
    if (this.pending.size === 0) return false
    const id = (message as { id?: unknown }).id
    if (id === undefined || ('method' in message && message.method !== undefined)) return false
    const pending = this.pending.get(Number(id))
    if (!pending) return false
    const kind = answerKind(message)
    // not an answer the SDK would route either: it reports it, and the call waits for a real one
    if (kind === 'other') return false
    pending.settle(kind, message)
    return true
  }

  /**
   * A result only the SDK's decoding can normalize: replayed to the SDK
   * client as the answer to a tools/call of its own, which the transport
   * answers locally (`replay`), so the SDK's schema, its key order and its
   * errors apply exactly as on a call it had made.
   */
  private async decodeBySdk(result: Record<string, unknown>): Promise<ToolCallResult> {
    const key = this.nextReplay++
    this.replays.set(key, result)
    try {
      return (await this.client.callTool(
        { name: `${REPLAY_PREFIX}${key}` },
        { timeout: this.timeoutMs },
      )) as ToolCallResult
    } finally {
      this.replays.delete(key)
    }
  }

  private replay(message: JSONRPCMessage): JSONRPCMessage | undefined {
    const request = message as { method?: unknown; id?: string | number; params?: { name?: unknown } }
    const name = request.params?.name
    if (
      request.method !== 'tools/call' ||
      typeof name !== 'string' ||
      !name.startsWith(REPLAY_PREFIX) ||
      request.id === undefined
    )
      return undefined
    const result = this.replays.get(Number(name.slice(REPLAY_PREFIX.length)))
    if (!result)
      return { jsonrpc: '2.0', id: request.id, error: { code: -32603, message: 'tutti: the answer to decode is gone' } }
    return { jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage
  }
}

/**
 * A 2026-07-28 result as the SDK client's codec lifts it: a `complete` one
 * without its resultType; any other (or none) is the SDK's to decide.
 */
function completed(result: Record<string, unknown>): Record<string, unknown> | undefined {
  if (result.resultType !== 'complete') return undefined
  const { resultType: _, ...rest } = result
  return rest
}

function listen(signal: AbortSignal, cancel: (reason: unknown) => void): () => void {
  const onAbort = (): void => cancel(signal.reason)
  signal.addEventListener('abort', onAbort, { once: true })
  return () => signal.removeEventListener('abort', onAbort)
}

/** What the SDK rejects a cancelled or timed-out call with. */
function asCancel(reason: unknown): Error {
  return reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason))
}
