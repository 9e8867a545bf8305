import http from 'node:http'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { Link } from './daemon-link.js'

export type Exchange =
  | { kind: 'answer'; status: number; contentType: string; response: http.IncomingMessage }
  /** It never reached the daemon (nothing listens on the port): safe to send again, elsewhere. */
  | { kind: 'refused'; reason: string }
  /** The daemon went away with it, or the client cancelled it: never sent again (a tools/call is not idempotent). */
  | { kind: 'lost'; reason: string }

/**
 * An idle connection is kept this long at most; the daemon's own
 * `Keep-Alive: timeout` hint (5 s) makes node's agent close it a second
 * before the daemon would (node applies the hint only below this).
 */
const IDLE_SOCKET_MS = 60_000

/**
 * POSTs to the connector server over kept-alive loopback connections: the
 * bridge's hot path, so the message's bytes go as they came, and the answer
 * comes back as node's response stream.
 */
export class DaemonHttp {
  private agent = DaemonHttp.newAgent()

  private static newAgent(): http.Agent {
    return new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS })
  }

  /**
   * Sent after the I/O already delivered has run (setImmediate): a daemon
   * that went away closed its kept-alive connections before the client's
   * next message could arrive, but their ends may be in the same batch of
   * events as that message. Read first, they take those connections out of
   * the agent's pool; read after, the message goes out on a dead one and is
   * `lost`, never sent again, although no daemon read it.
   */
  async post(link: Link, headers: Record<string, string>, body: Buffer, signal?: AbortSignal): Promise<Exchange> {
    await new Promise<void>((resolve) => setImmediate(resolve))
    return new Promise((resolve) => {
      const req = http.request({
        agent: this.agent,
        host: '127.0.0.1',
        port: link.port,
        path: link.path,
        method: 'POST',
        headers: {
          ...headers,
          host: `127.0.0.1:${link.port}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(body.length),
          authorization: `Bearer ${link.token}`,
        },
      })
      const onAbort = () => req.destroy(new TuttiError(ErrorCodes.CANCELLED, 'cancelled by the client'))
      signal?.addEventListener('abort', onAbort, { once: true })
      req.once('response', (response) => {
        signal?.removeEventListener('abort', onAbort)
        resolve({
          kind: 'answer',
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'] ?? '',
          response,
        })
      })
      req.once('error', (err: NodeJS.ErrnoException) => {
        signal?.removeEventListener('abort', onAbort)
        resolve(
          err.code === 'ECONNREFUSED'
            ? { kind: 'refused', reason: err.message }
            : { kind: 'lost', reason: err.message },
        )
      })
      if (signal?.aborted) onAbort()
      else req.end(body)
    })
  }

  /** The daemon went away: its kept-alive connections are of no use to the next one. */
  reset(): void {
    this.agent.destroy()
    this.agent = DaemonHttp.newAgent()
  }

  close(): void {
    this.agent.destroy()
  }
}
