import http from 'node:http'
import type net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DaemonHttp, type Exchange } from '../../src/runtime/bridge/daemon-http.js'
import type { Link } from '../../src/runtime/bridge/daemon-link.js'

/** Reads an exchange's answer to its end (so that its connection goes back to the agent's pool). */
async function drained(ex: Exchange): Promise<string> {
  if (ex.kind !== 'answer') throw new Error(`expected an answer, got ${ex.kind}: ${ex.reason}`)
  let text = ''
  for await (const chunk of ex.response) text += chunk
  return text
}

describe('DaemonHttp: the bridge’s kept-alive POSTs to the daemon', () => {
  const sockets = new Set<net.Socket>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => res.end('{"ok":1}'))
  })
  server.keepAliveTimeout = 60_000
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  // DaemonHttp reads the port, path and token only; the daemon's control client is never asked here
  let link: Link
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    link = { port: (server.address() as net.AddressInfo).port, path: '/mcp', token: 't' } as Link
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it(
    'a message that arrives with the end of its kept-alive connection goes out on a new one, not the dead one ' +
      '(kill -9 of the daemon: its connections end as the client sends its next call)',
    async () => {
      for (let i = 0; i < 20; i++) {
        const daemon = new DaemonHttp()
        try {
          expect(await drained(await daemon.post(link, {}, Buffer.from('{}')))).toBe('{"ok":1}')
          expect(sockets.size).toBe(1)
          const [kept] = sockets
          // posted in the very turn the daemon's side is closed, before this process has read that end
          const next = await new Promise<Exchange>((resolve) => {
            kept!.once('close', () => resolve(daemon.post(link, {}, Buffer.from('{}'))))
            kept!.destroy()
          })
          expect(await drained(next)).toBe('{"ok":1}')
        } finally {
          daemon.close()
        }
      }
    },
  )

  it('nothing listening is `refused` (safe to send again elsewhere); a cancelled post is `lost`', async () => {
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as net.AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const daemon = new DaemonHttp()
    try {
      expect((await daemon.post({ ...link, port }, {}, Buffer.from('{}'))).kind).toBe('refused')
      const cancelled = new AbortController()
      cancelled.abort()
      expect((await daemon.post(link, {}, Buffer.from('{}'), cancelled.signal)).kind).toBe('lost')
    } finally {
      daemon.close()
    }
  })
})
