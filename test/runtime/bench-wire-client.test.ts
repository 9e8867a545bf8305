import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
// the bench's raw HTTP client: every headline calls/s figure goes through it
import { WirePool } from '../../bench/lib/raw/wire.js'

/**
 * bench/lib/raw/wire.js reads answers the way the servers the bench measures
 * write them: Content-Length, chunked (with and without trailers), bodies
 * without either that end with the connection, and empty 202s; it reuses a
 * kept-alive socket, and retries once on a fresh one when the server closed
 * the idle one it took. A malformed answer is an error naming the request.
 */
const servers: Array<http.Server | net.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
})

async function listen(server: http.Server | net.Server): Promise<URL> {
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
}

const post = (pool: any, path: string, body = '{}') =>
  pool.request({ method: 'POST', path, headers: { 'Content-Type': 'application/json' }, body, timeoutMs: 5_000 })

describe('the bench raw client (wire.js)', () => {
  it(
    'Content-Length, chunked, chunked with trailers, ' + 'an empty 202 and a large body, all on one kept-alive socket',
    async () => {
      const sockets = new Set<net.Socket>()
      const server = http.createServer((req, res) => {
        sockets.add(req.socket)
        let body = ''
        req.on('data', (c) => (body += c))
        req.on('end', () => {
          if (req.url === '/length')
            return res
              .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
              .end(`{"got":${body}}`)
          if (req.url === '/chunked') {
            res.writeHead(200, { 'content-type': 'text/event-stream' })
            res.write('event: message\n')
            return res.end('data: {"ok":true}\n\n')
          }
          if (req.url === '/trailers') {
            res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-done' })
            res.write('part one, ')
            res.addTrailers({ 'x-done': 'yes' })
            return res.end('part two')
          }
          if (req.url === '/large')
            return res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ pad: 'é'.repeat(1_500_000) }))
          res.writeHead(202).end()
        })
      })
      const pool = new WirePool(await listen(server))
      expect(await post(pool, '/length', '{"a":1}')).toEqual({
        status: 200,
        headers: expect.objectContaining({ 'content-type': 'application/json', 'mcp-session-id': 's1' }),
        text: '{"got":{"a":1}}',
      })
      expect((await post(pool, '/chunked')).text).toBe('event: message\ndata: {"ok":true}\n\n')
      expect((await post(pool, '/trailers')).text).toBe('part one, part two')
      expect(await post(pool, '/accepted')).toMatchObject({ status: 202, text: '' })
      expect(JSON.parse((await post(pool, '/large')).text).pad).toHaveLength(1_500_000)
      expect(sockets.size).toBe(1)
      pool.destroy()
    },
  )

  it('a body with neither length nor chunks ends with the connection, which is not reused', async () => {
    let connections = 0
    const server = net.createServer((socket) => {
      connections++
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end'))
    })
    const pool = new WirePool(await listen(server))
    expect((await post(pool, '/')).text).toBe('until the end')
    expect((await post(pool, '/')).text).toBe('until the end')
    expect(connections).toBe(2)
    pool.destroy()
  })

  it(
    'a kept-alive socket the server drops as the next request arrives: ' + 'the request goes again on a fresh one',
    async () => {
      let connections = 0
      const server = net.createServer((socket) => {
        const n = ++connections
        let requests = 0
        socket.on('data', () => {
          // the first connection answers once, then closes on the next request without a byte of answer
          if (n === 1 && ++requests > 1) return socket.destroy()
          socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nanswer ${n}`)
        })
      })
      const pool = new WirePool(await listen(server))
      expect((await post(pool, '/')).text).toBe('answer 1')
      expect((await post(pool, '/')).text).toBe('answer 2')
      expect(connections).toBe(2)
      pool.destroy()
    },
  )

  it('an idle socket already destroyed when taken: the request goes again on a fresh one', async () => {
    let connections = 0
    const server = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`answer ${connections}`),
    )
    server.on('connection', () => connections++)
    const pool = new WirePool(await listen(server))
    expect((await post(pool, '/')).text).toBe('answer 1')
    // gone without the pool's close handler having run
    const idle = pool.idle[0] as net.Socket
    idle.removeAllListeners('close')
    idle.destroy()
    expect((await post(pool, '/')).text).toBe('answer 2')
    pool.destroy()
  })

  it('a malformed answer or one cut short is an error naming the request, never a result', async () => {
    const server = net.createServer((socket) => {
      socket.once('data', (d) => {
        if (String(d).startsWith('POST /garbage')) socket.end('SSH-2.0-not-http\r\n\r\n')
        else socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort')
      })
    })
    const pool = new WirePool(await listen(server))
    await expect(post(pool, '/garbage')).rejects.toThrow(/^POST \/garbage: not an HTTP\/1\.1 status line/)
    await expect(post(pool, '/short')).rejects.toThrow(
      /^POST \/short: connection closed before the answer was complete/,
    )
    pool.destroy()
  })
})
