import { randomBytes } from 'node:crypto'
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'

/** How long a 2025 client has to answer a relayed request: a person may be filling in a form. */
export const CLIENT_ANSWER_TIMEOUT_MS = 10 * 60_000

/** A JSON-RPC message that is a response (a result or an error), not a request or notification. */
export function isJsonRpcResponse(message: Record<string, unknown>): boolean {
  return message.method === undefined && message.id !== undefined && ('result' in message || 'error' in message)
}

interface Waiting {
  session: string
  settle(message: Record<string, unknown>): void
}

/**
 * Requests relayed to 2025-era clients, waiting for their answers. Such a
 * request goes out on the SSE stream of the call it serves; the client
 * answers with a new POST, which the SDK's stateless serving would hand to
 * a fresh server that never sent anything. So the endpoint takes every
 * POSTed response itself and hands it here. Ids are unique for the
 * daemon's life (a random prefix and a counter), never the SDK's
 * per-instance counter from 0 that every request's server restarts; an
 * answer is taken only from the session the request was sent to.
 */
export class ClientAnswers {
  private readonly prefix = `tutti-${randomBytes(6).toString('hex')}-`
  private next = 1
  private readonly waiting = new Map<string, Waiting>()

  constructor(private readonly timeoutMs: number = CLIENT_ANSWER_TIMEOUT_MS) {}

  get size(): number {
    return this.waiting.size
  }

  /** A fresh id: never given out twice by this daemon. */
  allocate(): string {
    return `${this.prefix}${this.next++}`
  }

  /**
   * Sends the request (`send` writes it on the call's stream) and resolves
   * with the client's result; a JSON-RPC error answer rejects with it. Ends
   * without an answer when `signal` aborts (the upstream withdrew its
   * request, or the call ended) or after the timeout.
   */
  async ask(
    session: string,
    method: string,
    params: Record<string, unknown> | undefined,
    send: (message: Record<string, unknown>) => Promise<void>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const id = this.allocate()
    let unsent: ((err: unknown) => void) | undefined
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      const done = (): void => {
        this.waiting.delete(id)
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
      }
      const withdraw = (reason: string): void => {
        done()
        const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }
        // the client is told its answer is no longer wanted; a stream already closed has nobody left to tell
        send(cancelled).catch(() => undefined)
        reject(new ProtocolError(ProtocolErrorCode.InternalError, reason))
      }
      const onAbort = (): void => withdraw(`${method} ended before the client answered`)
      const timer = setTimeout(() => withdraw(`the client did not answer ${method} in time`), this.timeoutMs)
      timer.unref()
      unsent = (err) => {
        done()
        reject(new ProtocolError(ProtocolErrorCode.InternalError, `${method} could not be sent to the client: ${err}`))
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.set(id, {
        session,
        settle: (message) => {
          done()
          const error = message.error as { code?: unknown; message?: unknown; data?: unknown } | undefined
          if (!error) return resolve((message.result ?? {}) as Record<string, unknown>)
          const code = Number.isSafeInteger(error.code) ? Number(error.code) : ProtocolErrorCode.InternalError
          reject(new ProtocolError(code, String(error.message ?? 'the client refused'), error.data))
        },
      })
    })
    if (this.waiting.has(id)) {
      const request = { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }
      await Promise.resolve()
        .then(() => send(request))
        // the call's stream is gone (the call ended), even if `send` throws at once: it fails with the reason
        .catch((err: unknown) => unsent?.(err))
    }
    return answer
  }

  /** A POSTed answer: true when a request of this session was waiting for it (and now has it). */
  answer(session: string, message: Record<string, unknown>): boolean {
    const id = message.id
    const waiting = typeof id === 'string' ? this.waiting.get(id) : undefined
    // another session's id is refused exactly as an unknown one: nothing says it exists
    if (!waiting || waiting.session !== session) return false
    waiting.settle(message)
    return true
  }
}
