import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { legacyPost, MODERN_META, modernClient, modernPost, rawRequest, type Binding } from '../support/mcp-clients.js'
import { cleanupState, readDaemonJson, REPO, tempStateDir, tuttiJson } from '../support/tutti.js'

const MiB = 1024 * 1024
// the timeouts shrunk so that the suite stays fast, and the keep-alive grown so that only the idle cap closes
// idle connections (src/runtime/http-surface/http-limits.ts reads this in the daemon only)
const LIMITS = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 120_000 }
const ENV = { TUTTI_DAEMON_HTTP_LIMITS: JSON.stringify(LIMITS) }

/** What a raw client saw: the status line's code, the Connection header, and how many body bytes it got out. */
interface Flood {
  status?: number
  connection?: string
  written: number
}

/**
 * A request head, then up to 256 MiB of body as fast as the socket takes it,
 * until the server closes the connection (or everything was written).
 */
function flood(port: number, urlPath: string, headers: Record<string, string>, chunked: boolean): Promise<Flood> {
  const TOTAL = 256 * MiB
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    const frame = chunked
      ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
      : chunk
    let written = 0
    let response = ''
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      socket.destroy()
      const status = /^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]
      resolve({
        status: status ? Number(status) : undefined,
        connection: /\r\nconnection: *([^\r]*)/i.exec(response)?.[1]?.toLowerCase(),
        written,
      })
    }
    socket.on('data', (c: Buffer) => (response += c.toString('latin1')))
    socket.on('error', finish)
    socket.on('close', finish)
    const head = [
      `POST ${urlPath} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ]
    socket.write(
      `${[...head, chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${TOTAL}`].join('\r\n')}\r\n\r\n`,
    )
    const pump = (): void => {
      while (!done && written < TOTAL) {
        written += chunk.length
        if (!socket.write(frame)) return void socket.once('drain', pump)
      }
      // all of it was taken: the server read the whole body
      if (!done) socket.end(chunked ? '0\r\n\r\n' : '', finish)
    }
    pump()
  })
}

/** Resolves with what the server sent when it closes the connection. */
function closed(socket: net.Socket): Promise<string> {
  let text = ''
  socket.on('data', (c: Buffer) => (text += c.toString('latin1')))
  return new Promise((resolve) => socket.once('close', () => resolve(text)))
}

/** One complete response on a kept-alive socket (Content-Length or chunked). */
function response(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (c: Buffer): void => {
      text += c.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))
      if (length ? text.length >= end + 4 + Number(length[1]) : text.endsWith('\r\n0\r\n\r\n')) {
        socket.off('data', onData)
        resolve(text)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => reject(new Error('closed before the response')))
  })
}

describe('hardening: the HTTP surface of the daemon', () => {
  let dir: string
  let port: number
  let controlToken: string
  let binding: Binding
  /** Another session, for the bystander checks. */
  let other: Binding
  let remote: ChildProcess
  const tutti = <T = any>(args: string[]) => tuttiJson<T>(dir, args, { env: ENV })

  beforeAll(async () => {
    remote = spawn(process.execPath, [path.join(REPO, 'test/fixtures/deep-result-http-server.mjs')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const remotePort = await new Promise<number>((resolve) =>
      remote.stdout!.on('data', (d: Buffer) => resolve(Number(/listening (\d+)/.exec(d.toString())![1]))),
    )
    const release = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-deep-'))
    const manifest = {
      schemaVersion: 1,
      key: 'deep',
      name: 'Deep results',
      version: '1.0.0',
      auth: { kind: 'none' },
      mcp: { transport: 'http', url: `http://127.0.0.1:${remotePort}/mcp` },
    }
    fs.writeFileSync(path.join(release, 'tutti-connector.json'), JSON.stringify(manifest))
    dir = tempStateDir('hardening-http')
    // the CLI starts the daemon with ENV (its limits are read at start); the rest is set up in-process
    await tutti(['connector', 'install', release])
    await installed(dir, faultConnector({ key: 'fx' }))
    binding = (await prepared(dir, { provider: 'claude', session: 'attacker' })).mcpServers[0]!
    other = (await prepared(dir, { provider: 'codex', session: 'bystander' })).mcpServers[0]!
    const info = readDaemonJson(dir)!
    port = info.port
    controlToken = info.controlToken
  })
  afterAll(async () => {
    remote?.kill()
    await cleanupState(dir)
  })

  /** Another connector, through a fresh client of another session, is listed and callable. */
  async function othersUnaffected(): Promise<void> {
    const list = await modernPost(other, 'tools/list')
    expect(list.status).toBe(200)
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['fx_echo', 'fx_slow']),
    )
    const client = await modernClient(other)
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['fx_echo', 'deep_echo']),
      )
      expect((await client.callTool({ name: 'fx_echo', arguments: { message: 'still here' } })).content).toEqual([
        { type: 'text', text: 'still here' },
      ])
    } finally {
      await client.close()
    }
  }

  it('a Host with userinfo is refused with 403 on every route, even with valid credentials', async () => {
    const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } })
    const mcpHeaders = {
      ...binding.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    }
    const control = { authorization: `Bearer ${controlToken}`, 'content-type': 'application/json' }
    for (const host of [
      `evil@127.0.0.1:${port}`,
      `user:pw@localhost:${port}`,
      `evil.example.com@[::1]:${port}`,
      `@127.0.0.1:${port}`,
    ]) {
      for (const [route, headers, body] of [
        ['/mcp/connector', mcpHeaders, listBody],
        ['/control/health', control, '{}'],
        ['/control/stop', control, '{}'],
        ['/nowhere', control, '{}'],
      ] as const) {
        const res = await rawRequest(`http://127.0.0.1:${port}${route}`, { headers: { ...headers, host }, body })
        expect(res.status, `${host} ${route}`).toBe(403)
      }
    }
    expect(readDaemonJson(dir)?.port).toBe(port)
    await othersUnaffected()
  })

  const wrongToken = { authorization: 'Bearer tutti_not-a-real-token' }
  it.each([
    ['MCP, a wrong session token, Content-Length 256 MiB', 401, '/mcp/connector', 'wrong', false],
    ['MCP, a wrong session token, chunked', 401, '/mcp/connector', 'wrong', true],
    ['MCP, Content-Length over 4 MiB', 413, '/mcp/connector', 'session', false],
    ['MCP, a chunked body growing past 4 MiB', 413, '/mcp/connector', 'session', true],
    ['control, a wrong control token, Content-Length 256 MiB', 401, '/control/status', 'wrong', false],
    ['control, a wrong control token, chunked', 401, '/control/status', 'wrong', true],
    ['control, an unknown message, chunked', 404, '/control/nope', 'control', true],
    ['control, Content-Length over 1 MiB', 413, '/control/status', 'control', false],
    ['control, a chunked body growing past 1 MiB', 413, '/control/status', 'control', true],
    ['a foreign Origin, chunked', 403, '/control/status', 'foreign', true],
  ] as const)(
    '%s → %i, Connection: close, and the rest of the body is never read',
    async (_label, status, urlPath, who, chunked) => {
      const byWho: Record<string, Record<string, string>> = {
        wrong: wrongToken,
        session: binding.headers,
        control: { authorization: `Bearer ${controlToken}` },
        foreign: { origin: 'http://evil.example.com' },
      }
      const headers = byWho[who]
      const res = await flood(port, urlPath, { accept: 'application/json, text/event-stream', ...headers }, chunked)
      // what socket buffers hold (a few MiB) and the limit itself, far from the 256 MiB offered
      expect(res.written).toBeLessThan(64 * MiB)
      expect(res.status).toBe(status)
      expect(res.connection).toBe('close')
      await othersUnaffected()
    },
  )

  it('a client that sends half a request head, or nothing, is closed by the headers timeout', {
    timeout: 30_000,
  }, async () => {
    const half = net.connect(port, '127.0.0.1')
    half.write(`POST /mcp/connector HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Ty`)
    const silent = net.connect(port, '127.0.0.1')
    const [halfSaw, silentSaw] = await Promise.all([closed(half), closed(silent)])
    expect(halfSaw).toMatch(/^HTTP\/1\.1 408/)
    expect(silentSaw).toMatch(/^HTTP\/1\.1 408/)
    await othersUnaffected()
  })

  it('a body that never finishes is closed by the request timeout; a listen stream and a long call outlive it', {
    timeout: 30_000,
  }, async () => {
    const listener = await modernClient(other)
    const changes: unknown[] = []
    listener.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n.params))
    const sub = await listener.listen({ toolsListChanged: true })
    const caller = await modernClient(other)
    // twice the request timeout: a response may take as long as it needs
    const longCall = caller.callTool({ name: 'fx_slow', arguments: { ms: 2 * LIMITS.requestTimeoutMs } })

    const slow = net.connect(port, '127.0.0.1')
    const headers = Object.entries(binding.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')
    slow.write(
      `POST /mcp/connector HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 100\r\n${headers}\r\n{"jsonrpc"`,
    )
    expect(await closed(slow)).toMatch(/^HTTP\/1\.1 408/)

    // the stream opened before the slow request is still open and still delivers
    await installed(dir, faultConnector({ key: 'late' }))
    expect(
      await eventually(
        () => changes.length,
        (n) => n >= 1,
      ),
    ).toBeGreaterThanOrEqual(1)
    expect((await longCall).content).toEqual([{ type: 'text', text: `slept ${2 * LIMITS.requestTimeoutMs} ms in v1` }])
    await sub.close()
    await Promise.all([listener.close(), caller.close()])
    await othersUnaffected()
  })

  it('of 200 idle keep-alive connections at most 64 stay open, and those are the most recently used', async () => {
    const CAP = 64
    const request =
      `POST /control/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Authorization: Bearer ${controlToken}\r\nContent-Type: application/json\r\n` +
      `Content-Length: 2\r\n\r\n{}`
    const sockets: net.Socket[] = []
    const closedOnes = new Set<number>()
    for (let i = 0; i < 200; i++) {
      const socket = net.connect(port, '127.0.0.1')
      socket.on('close', () => closedOnes.add(i))
      socket.on('error', () => closedOnes.add(i))
      socket.write(request)
      expect(await response(socket)).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\nconnection: keep-alive/i)
      sockets.push(socket)
    }
    await eventually(
      () => closedOnes.size,
      (n) => n >= 200 - CAP,
    )
    const open = sockets.map((_, i) => i).filter((i) => !closedOnes.has(i))
    expect(open).toEqual(Array.from({ length: CAP }, (_, k) => 200 - CAP + k))
    // the survivors are still served
    for (const i of open) {
      sockets[i]!.write(request)
      expect(await response(sockets[i]!)).toMatch(/^HTTP\/1\.1 200/)
    }
    for (const socket of sockets) socket.destroy()
    await othersUnaffected()
  })

  it('a tool result nested 10,000 levels: a JSON-RPC error on the fast path and on the SDK path, in both eras', {
    timeout: 30_000,
  }, async () => {
    const call = { name: 'deep_deep', arguments: {} }
    const fastModern = await modernPost(binding, 'tools/call', call)
    // an extra _meta key sends the request down the SDK path; so does a 2025 request without the version header
    const sdkModern = await modernPost(binding, 'tools/call', {
      ...call,
      _meta: { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' },
    })
    const body = { id: 7, method: 'tools/call', params: call }
    const fastLegacy = await legacyPost(binding, body, { 'mcp-protocol-version': '2025-06-18' })
    const sdkLegacy = await legacyPost(binding, body)
    const expected = {
      code: -32603,
      message: expect.stringMatching(/^connector "deep": the tool result could not be serialized/),
      data: { connector: 'deep' },
    }
    for (const [label, res] of Object.entries({ fastModern, sdkModern, fastLegacy, sdkLegacy })) {
      expect(res.status, label).toBe(200)
      expect(res.json?.error, label).toEqual(expected)
    }
    expect(sdkModern.json).toEqual(fastModern.json)
    expect(sdkLegacy.json).toEqual(fastLegacy.json)
    // the connector itself keeps serving
    expect(
      (await modernPost(binding, 'tools/call', { name: 'deep_echo', arguments: { message: 'fine' } })).json.result
        .content,
    ).toEqual([{ type: 'text', text: 'fine' }])
    await othersUnaffected()
  })
})
