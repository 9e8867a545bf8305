import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MODERN_ENVELOPE, RawBridge } from '../support/bridge-clients.js'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { MODERN_META, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, control, tempStateDir, tuttiJson } from '../support/tutti.js'

// the defaults of src/runtime/http-surface/http-limits.ts
const PER_SESSION = 16
const OVERALL = 256

/** A listen stream as the daemon answered it: the first message (its acknowledgement, or the refusal). */
interface Stream {
  status: number
  first: any
  close(): void
}

/** `subscriptions/listen` on a connection of its own, resolved with the stream's first message. */
function listen(binding: Binding, id: number): Promise<Stream> {
  const url = new URL(binding.url)
  const params = { notifications: { toolsListChanged: true }, _meta: MODERN_META }
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params })
  const headers = {
    ...binding.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'subscriptions/listen',
  }
  return new Promise((resolve, reject) => {
    const target = { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers }
    const req = http.request(target, (res) => {
      let text = ''
      const sse = String(res.headers['content-type']).includes('text/event-stream')
      const done = (first: unknown): void => resolve({ status: res.statusCode ?? 0, first, close: () => req.destroy() })
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        const data = sse ? /^data: (.*)\n/m.exec(text) : null
        if (data) done(JSON.parse(data[1]!))
      })
      res.on('end', () => {
        if (!sse) done(JSON.parse(text))
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const ACK = 'notifications/subscriptions/acknowledged'

describe('round 3: listen streams are capped per session and overall', () => {
  let dir: string
  let n = 0
  const open: Stream[] = []

  /** A session of its own, minted at the daemon (its token stays in this process). */
  async function session(): Promise<Binding> {
    const ids = { provider: 'codex', workspace: 'ws', session: `listener-${n++}` }
    const issued = await control(dir, 'session-prepare', ids)
    return { url: issued.url, headers: { authorization: `Bearer ${issued.token}` } }
  }

  function closeStream(stream: Stream): void {
    stream.close()
    open.splice(open.indexOf(stream), 1)
  }

  /** Opens a stream that must be acknowledged, and keeps it open. */
  async function opened(binding: Binding, id: number): Promise<Stream> {
    const stream = await listen(binding, id)
    expect({ status: stream.status, method: stream.first.method }).toEqual({ status: 200, method: ACK })
    open.push(stream)
    return stream
  }

  function expectRefused(stream: Stream, id: number, limit: string, max: number, why: string): void {
    expect(stream.status).toBe(429)
    expect(stream.first).toMatchObject({ jsonrpc: '2.0', id, error: { data: { limit, max } } })
    expect(stream.first.error.message).toContain(why)
  }

  async function listsTools(binding: Binding): Promise<void> {
    const list = await modernPost(binding, 'tools/list')
    expect(list.status).toBe(200)
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toContain('fx_echo')
  }

  beforeAll(async () => {
    dir = tempStateDir('round3-listen')
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx' })])
  })
  afterAll(async () => {
    for (const stream of open) stream.close()
    await cleanupState(dir)
  })

  it("through the bridge: a client's listen past the cap is answered with the refusal; it carries on", async () => {
    const bridge = RawBridge.start(dir)
    try {
      bridge.send({ id: 'd', method: 'server/discover', params: { _meta: MODERN_ENVELOPE } })
      await bridge.answer('d')
      // the bridge's own watch (opened before the first request went) is one of the session's streams: 15 more are
      // the client's, opened one after the other
      const params = { notifications: { toolsListChanged: true }, _meta: MODERN_ENVELOPE }
      const acks = () => bridge.messages.filter((m) => m.method === ACK).length
      for (let id = 1; id < PER_SESSION; id++) {
        bridge.send({ id, method: 'subscriptions/listen', params })
        expect(await until(() => acks() === id)).toBe(true)
      }
      bridge.send({ id: PER_SESSION, method: 'subscriptions/listen', params })
      const refusal = await bridge.answer(PER_SESSION)
      expect(refusal.error.message).toContain(`this session has ${PER_SESSION} listen streams open`)
      expect(refusal.error.data).toEqual({ limit: 'listenStreamsPerSession', max: PER_SESSION })
      expect(acks()).toBe(PER_SESSION - 1)
      bridge.send({ id: 'l', method: 'tools/list', params: { _meta: MODERN_ENVELOPE } })
      expect((await bridge.answer('l')).result.tools.map((t: { name: string }) => t.name)).toContain('fx_echo')
      expect(bridge.stderr).not.toContain('went away')
    } finally {
      bridge.end()
      await bridge.exited
    }
  })

  it('one token: 16 streams open, the 17th is refused naming the cap; its calls and other sessions go on', async () => {
    const a = await session()
    const mine: Stream[] = []
    for (let id = 1; id <= PER_SESSION; id++) mine.push(await opened(a, id))
    const why = `this session has ${PER_SESSION} listen streams open`
    expectRefused(await listen(a, 99), 99, 'listenStreamsPerSession', PER_SESSION, why)
    await listsTools(a)
    // another session opens its stream, and is served
    const b = await session()
    await opened(b, 1)
    await listsTools(b)
    // a stream the client closes frees its place at once: one that reconnects after closing is never refused
    closeStream(mine[0]!)
    expect(
      await until(async () => {
        const again = await listen(a, 100)
        if (again.status === 200) open.push(again)
        return again.status === 200
      }),
    ).toBe(true)
    expectRefused(await listen(a, 101), 101, 'listenStreamsPerSession', PER_SESSION, why)
  })

  it('all sessions together: past 256 streams the next is refused naming the overall cap; all are served', async () => {
    expect(open.length).toBe(PER_SESSION + 1)
    let left = OVERALL - open.length
    let last: Binding | undefined
    while (left > 0) {
      last = await session()
      const count = Math.min(left, PER_SESSION - 1)
      for (let id = 1; id <= count; id++) await opened(last, id)
      left -= count
    }
    // the last session holds fewer than its own cap: the overall cap refuses it
    const why = `the daemon has ${OVERALL} listen streams open`
    expectRefused(await listen(last!, 500), 500, 'listenStreams', OVERALL, why)
    const fresh = await session()
    expectRefused(await listen(fresh, 1), 1, 'listenStreams', OVERALL, why)
    await listsTools(fresh)
    // one closed anywhere makes room for a new one
    closeStream(open[0]!)
    expect(
      await until(async () => {
        const again = await listen(fresh, 2)
        if (again.status === 200) open.push(again)
        return again.status === 200
      }),
    ).toBe(true)
  })
})
