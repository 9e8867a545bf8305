import { jsonRpcError, JSONRPC } from '../http-surface/error-response.js'
import { HTTP_LIMITS } from '../http-surface/http-limits.js'
import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'

export interface ListenCaps {
  readonly perSession: number
  readonly overall: number
}

const DEFAULT_CAPS: ListenCaps = { perSession: HTTP_LIMITS.listenStreamsPerSession, overall: HTTP_LIMITS.listenStreams }

/**
 * Open `subscriptions/listen` streams, by session token hash, so that a
 * revoked token's streams end at once rather than at the next reconnect,
 * and so that neither one session nor all of them together hold more than
 * their cap. Past a cap a new stream is refused, and the open ones are
 * left alone: closing a session's oldest instead would end, unasked, the
 * stream a working client relies on (the bridge's own tools-changed watch
 * is its first), and the overall cap must never let one session end
 * another's. A client that goes away frees its streams at once.
 */
export class ListenStreams {
  private readonly bySession = new Map<string, Set<() => void>>()
  /** Streams per session, open or reserved (admitted, the SDK still answering). */
  private readonly counts = new Map<string, number>()
  private total = 0

  constructor(
    private readonly log: Logger,
    private readonly caps: ListenCaps = DEFAULT_CAPS,
  ) {}

  /** Room for one more stream of `session`, held until `track` or `release`; else the refusal answering `id`. */
  reserve(sessionHash: string, id: unknown): Response | undefined {
    const mine = this.counts.get(sessionHash) ?? 0
    if (mine >= this.caps.perSession) {
      const why = `this session has ${this.caps.perSession} listen streams open, the most one session may hold`
      return refusal(why, 'listenStreamsPerSession', this.caps.perSession, id)
    }
    if (this.total >= this.caps.overall) {
      const why = `the daemon has ${this.caps.overall} listen streams open, the most it holds for all sessions together`
      return refusal(why, 'listenStreams', this.caps.overall, id)
    }
    this.counts.set(sessionHash, mine + 1)
    this.total++
    return undefined
  }

  /** A reservation that did not become a stream (the SDK answered without one). */
  release(sessionHash: string): void {
    const n = (this.counts.get(sessionHash) ?? 1) - 1
    if (n > 0) this.counts.set(sessionHash, n)
    else this.counts.delete(sessionHash)
    this.total--
  }

  /**
   * Wrap a listen response, reserved before, so it can be ended from here; its reservation lasts until it ends, and
   * `ended` is called then.
   */
  track(sessionHash: string, response: Response, ended: () => void = () => {}): Response {
    if (!response.body) {
      this.release(sessionHash)
      ended()
      return response
    }
    const reader = response.body.getReader()
    let closeNow: () => void = () => {}
    let gone = false
    const log = this.log
    const streams = this.bySession.get(sessionHash) ?? new Set()
    this.bySession.set(sessionHash, streams)
    const forget = (): void => {
      if (gone) return
      gone = true
      ended()
      streams.delete(closeNow)
      if (streams.size === 0 && this.bySession.get(sessionHash) === streams) this.bySession.delete(sessionHash)
      this.release(sessionHash)
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        closeNow = () => {
          forget()
          void bestEffort(reader.cancel(), log, 'ending a listen stream')
          try {
            controller.close()
          } catch {
            // already closed
          }
        }
        streams.add(closeNow)
      },
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            forget()
            controller.close()
          } else controller.enqueue(value)
        } catch (err) {
          // handed on: the stream's reader sees the same error
          forget()
          controller.error(err)
        }
      },
      cancel() {
        forget()
        return reader.cancel()
      },
    })
    return new Response(body, { status: response.status, headers: response.headers })
  }

  closeSessions(hashes: readonly string[]): number {
    let closed = 0
    for (const hash of hashes) {
      for (const close of [...(this.bySession.get(hash) ?? [])]) {
        close()
        closed++
      }
    }
    return closed
  }

  get size(): number {
    let n = 0
    for (const s of this.bySession.values()) n += s.size
    return n
  }
}

function refusal(why: string, limit: string, max: number, id: unknown): Response {
  const message = `Too Many Requests: ${why}; close one (end its subscriptions/listen request) before opening another`
  return jsonRpcError(429, JSONRPC.SERVER_ERROR, message, id, { limit, max })
}
