import { timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** The page the browser shows once the redirect arrived; it carries nothing of the response. */
const DONE_PAGE =
  '<!doctype html><meta charset="utf-8"><title>tutti</title><p>Signed in to tutti: you can close this tab and ' +
  'return to the terminal.</p>\n'

/** What a request at the path without this sign-in's `state` is told: it is ignored, the real response still counts. */
const NOT_OURS = 'this is not the response to the sign-in tutti is waiting for (its state does not match); ignored\n'

/**
 * The redirect URI's path: fixed, since an authorization server matches the registered URI (RFC 8252 §7.3 lets
 * only the port vary).
 */
export const REDIRECT_PATH = '/oauth/callback'

/**
 * The sign-in's redirect URI (RFC 8252 §7.3): a listener on 127.0.0.1 for
 * one request, at the port of the registered redirect URI when it is free
 * (an authorization server that compares the whole URI then still matches),
 * else an ephemeral one. Anything at another path is a 404 and does not
 * count. Any local process or web page can send a request here, so only
 * one that carries this sign-in's `state` is the authorization response
 * (RFC 6749 §10.12); any other is answered 400 and the wait goes on.
 */
export class LoopbackRedirect {
  /** Requests at the path without this sign-in's state: said when the wait times out. */
  private ignoredCount = 0

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly received: Promise<URLSearchParams>,
  ) {}

  static async listen(state: string, preferredPort?: number): Promise<LoopbackRedirect> {
    const path = REDIRECT_PATH
    let deliver!: (params: URLSearchParams) => void
    const received = new Promise<URLSearchParams>((resolve) => (deliver = resolve))
    let used = false
    let self: LoopbackRedirect | undefined
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (req.method !== 'GET' || url.pathname !== path || used) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
        return
      }
      if (!sameState(url.searchParams.get('state'), state)) {
        res.writeHead(400, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(NOT_OURS)
        if (self) self.ignoredCount++
        return
      }
      used = true
      res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'close',
        })
        .end(DONE_PAGE)
      deliver(url.searchParams)
    })
    const listen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject)
          resolve()
        })
      })
    // taken (or not ours to have): an ephemeral port, and a server that lets the port vary still matches
    await (preferredPort ? listen(preferredPort).catch(() => listen(0)) : listen(0))
    const { port } = server.address() as AddressInfo
    self = new LoopbackRedirect(server, `http://127.0.0.1:${port}${path}`, received)
    return self
  }

  /** How many requests with another (or no) state were answered 400 and ignored. */
  get ignored(): number {
    return this.ignoredCount
  }

  /** The authorization response's parameters, or undefined when none came within `timeoutMs`. */
  async wait(timeoutMs: number): Promise<URLSearchParams | undefined> {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        this.received,
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs))),
      ])
    } finally {
      clearTimeout(timer)
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

function sameState(given: string | null, expected: string): boolean {
  if (given === null) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
