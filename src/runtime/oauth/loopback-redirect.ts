import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** The page the browser shows once the redirect arrived; it carries nothing of the response. */
const DONE_PAGE = '<!doctype html><meta charset="utf-8"><title>tutti</title><p>Signed in to tutti: you can close this tab and return to the terminal.</p>\n'

/** The redirect URI's path: fixed, since an authorization server matches the registered URI (RFC 8252 §7.3 lets only the port vary). */
export const REDIRECT_PATH = '/oauth/callback'

/**
 * The sign-in's redirect URI (RFC 8252 §7.3): a listener on 127.0.0.1 for
 * one request, at the port of the registered redirect URI when it is free
 * (an authorization server that compares the whole URI then still matches),
 * else an ephemeral one. Anything at another path is a 404 and does not
 * count; the first request at the path is the authorization response (its
 * `state` is checked by the caller), and the listener closes after it.
 */
export class LoopbackRedirect {
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly received: Promise<URLSearchParams>,
  ) {}

  static async listen(preferredPort?: number): Promise<LoopbackRedirect> {
    const path = REDIRECT_PATH
    let deliver!: (params: URLSearchParams) => void
    const received = new Promise<URLSearchParams>((resolve) => (deliver = resolve))
    let used = false
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (req.method !== 'GET' || url.pathname !== path || used) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
        return
      }
      used = true
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' }).end(DONE_PAGE)
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
    return new LoopbackRedirect(server, `http://127.0.0.1:${port}${path}`, received)
  }

  /** The authorization response's parameters, or undefined when none came within `timeoutMs`. */
  async wait(timeoutMs: number): Promise<URLSearchParams | undefined> {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([this.received, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))])
    } finally {
      clearTimeout(timer)
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
