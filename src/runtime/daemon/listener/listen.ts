import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../../log/logger.js'
import { HTTP_LIMITS, type HttpLimits } from '../../http-surface/http-limits.js'
import { IdleSockets } from './idle-sockets.js'

export interface LoopbackListener {
  readonly url: string
  readonly server: http.Server
  /** Stop accepting, close idle connections, resolve when the last connection has ended. */
  close(): Promise<void>
}

/**
 * The daemon's HTTP server on 127.0.0.1, with every limit of http-limits.ts.
 * The server is created here rather than by listhen because the timeouts are
 * server options: listhen's listen() takes none, and node's timeout check
 * interval can only be set when the server is created.
 */
export async function listenLoopback(
  handler: http.RequestListener,
  options: { preferredPort?: number; log: Logger; limits?: HttpLimits },
): Promise<LoopbackListener> {
  const limits = options.limits ?? HTTP_LIMITS
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
      maxHeaderSize: limits.maxHeaderBytes,
    },
    handler,
  )
  server.keepAliveTimeout = limits.keepAliveTimeoutMs
  const idle = new IdleSockets(server, limits.maxIdleSockets, options.log, limits.warnEveryMs)
  // the previous port first (clients configured with it keep working), else any free one
  const preferred = options.preferredPort ?? 0
  try {
    await bind(server, preferred)
  } catch (err) {
    if (preferred === 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    await bind(server, 0)
  }
  // once listening, a server error (an accept failing with EMFILE) must not take the daemon down
  let lastError = 0
  server.on('error', (err) => {
    if (Date.now() - lastError < limits.warnEveryMs) return
    lastError = Date.now()
    options.log.error('http server error (the next ones for a while are not logged)', { error: err })
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()))
        idle.drain()
      }),
  }
}

function bind(server: http.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err)
    server.once('error', onError)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError)
      resolve()
    })
  })
}
