import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'

/**
 * Open `subscriptions/listen` streams, by session token hash, so that a
 * revoked token's streams end at once rather than at the next reconnect.
 */
export class ListenStreams {
  private readonly bySession = new Map<string, Set<() => void>>()

  constructor(private readonly log: Logger) {}

  /** Wrap a listen response so it can be ended from here. */
  track(sessionHash: string, response: Response): Response {
    if (!response.body) return response
    const reader = response.body.getReader()
    let closeNow: () => void = () => {}
    const log = this.log
    const streams = this.bySession.get(sessionHash) ?? new Set()
    this.bySession.set(sessionHash, streams)
    const forget = (): void => {
      streams.delete(closeNow)
      if (streams.size === 0) this.bySession.delete(sessionHash)
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
