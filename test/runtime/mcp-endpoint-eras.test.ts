import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { HTTPResponse } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import {
  FakeUpstream,
  legacy,
  modern,
  SDK_META,
  startEndpoint,
  TOOLS,
  URL_,
  type Harness,
} from './mcp-endpoint-harness.js'

// Both protocol eras on one URL, served in-process: the SDK's own clients
// talk to endpoint.handle through a fetch that never opens a socket.
let h: Harness
beforeAll(async () => {
  h = await startEndpoint()
})
afterAll(async () => {
  await h.close()
})

function inProcessFetch(token: string) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const req = new Request(url, init)
    req.headers.set('authorization', `Bearer ${token}`)
    const res = await h.endpoint.handle(req)
    return res instanceof HTTPResponse
      ? new Response(res.body ?? null, { status: res.status ?? 200, headers: res.headers })
      : res
  }
}

async function client(era: 'modern' | 'legacy', token = h.token): Promise<Client> {
  const options =
    era === 'modern'
      ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } }
      : { supportedProtocolVersions: ['2025-06-18'] }
  const c = new Client({ name: `in-process-${era}`, version: '1' }, options)
  await c.connect(new StreamableHTTPClientTransport(new URL(URL_), { fetch: inProcessFetch(token) }))
  return c
}

describe('2026-07-28', () => {
  it('discover → list → call; listChanged advertised, serverInfo is connector', async () => {
    const c = await client('modern')
    expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    expect(c.getServerCapabilities()?.tools).toEqual({ listChanged: true })
    expect(c.getServerVersion()?.name).toBe('connector')
    const { tools } = await c.listTools()
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => `fx_${t.name}`).sort())
    expect(tools.find((t) => t.name === 'fx_echo')).toMatchObject({
      inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
      annotations: { readOnlyHint: true },
    })
    expect((await c.callTool({ name: 'fx_echo', arguments: { message: 'hi there' } })).content).toEqual([
      { type: 'text', text: 'hi there' },
    ])
    await c.close()
  })

  it(
    'a listen stream is acknowledged and gets one list_changed per real change, ' + 'none for a commit nobody can see',
    async () => {
      const c = await client('modern')
      const changes: unknown[] = []
      let notified: () => void = () => {}
      c.setNotificationHandler('notifications/tools/list_changed', (n) => {
        changes.push(n.params)
        notified()
      })
      const next = () => new Promise<void>((resolve) => (notified = resolve))
      const sub = await c.listen({ toolsListChanged: true })
      expect(sub.honoredFilter).toMatchObject({ toolsListChanged: true })
      expect(h.endpoint.openStreams).toBe(1)

      let seen = next()
      h.registry.commit(buildRoute('other', 1, new FakeUpstream(), [TOOLS[0]!]))
      await seen
      expect((await c.listTools()).tools.map((t) => t.name)).toContain('other_echo')
      // the same table again: nothing visible changed, so nothing is sent; the next real change proves it,
      // because notifications arrive in order on the one stream
      h.registry.commit(buildRoute('other', 2, new FakeUpstream(), [TOOLS[0]!]))
      seen = next()
      h.registry.remove('other', 3)
      await seen
      expect(changes).toHaveLength(2)
      for (const n of changes)
        expect(n).toMatchObject({ _meta: { 'io.modelcontextprotocol/subscriptionId': expect.anything() } })
      await sub.close()
      await c.close()
    },
  )

  it('revoking the session ends its listen streams at once, and its token is refused', async () => {
    const token = await h.sessions.issue('ws', 'listener', 'codex')
    const c = await client('modern', token)
    await c.listen({ toolsListChanged: true })
    expect(h.endpoint.openStreams).toBeGreaterThanOrEqual(1)
    const before = h.endpoint.openStreams
    await h.sessions.revoke({ session: 'listener' })
    expect(h.endpoint.openStreams).toBe(before - 1)
    await expect(c.listTools()).rejects.toThrow()
    await c.close()
  })
})

describe('2025-06-18', () => {
  it('with the SDK client: initialize → list → call, listChanged false', async () => {
    const c = await client('legacy')
    expect(c.getNegotiatedProtocolVersion()).toBe('2025-06-18')
    expect(c.getServerCapabilities()?.tools).toEqual({ listChanged: false })
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('fx_echo')
    expect((await c.callTool({ name: 'fx_echo', arguments: { message: 'old era' } })).content).toEqual([
      { type: 'text', text: 'old era' },
    ])
    await c.close()
  })

  it(
    'raw: initialize asking any 2025 revision is answered 2025-06-18, no session id; initialized, ping, list, ' +
      'call, empty resources and prompts',
    async () => {
      for (const asked of ['2025-06-18', '2025-11-25', '2025-03-26', '2024-11-05']) {
        const init = await legacy(
          h,
          {
            id: 1,
            method: 'initialize',
            params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
          },
          false,
        )
        expect(init.status).toBe(200)
        expect(init.json.result.protocolVersion, asked).toBe('2025-06-18')
        expect(init.json.result.serverInfo.name).toBe('connector')
        expect(init.json.result.capabilities.tools).toEqual({ listChanged: false })
        expect(init.headers.get('mcp-session-id')).toBeNull()
      }
      expect((await legacy(h, { method: 'notifications/initialized' })).status).toBe(202)
      expect((await legacy(h, { id: 2, method: 'ping' })).json.result).toEqual({})
      expect(
        (await legacy(h, { id: 3, method: 'tools/list' })).json.result.tools.map((t: { name: string }) => t.name),
      ).toContain('fx_echo')
      expect(
        (await legacy(h, { id: 4, method: 'tools/call', params: { name: 'fx_echo', arguments: { message: 'raw' } } }))
          .json.result.content,
      ).toEqual([{ type: 'text', text: 'raw' }])
      expect((await legacy(h, { id: 5, method: 'resources/list' })).json.result.resources).toEqual([])
      expect((await legacy(h, { id: 6, method: 'resources/templates/list' })).json.result.resourceTemplates).toEqual([])
      expect((await legacy(h, { id: 7, method: 'prompts/list' })).json.result.prompts).toEqual([])
    },
  )

  it('a client that keeps its own 2025 revision in the header after the handshake is still served', async () => {
    for (const header of ['2025-11-25', '2025-03-26']) {
      expect((await legacy(h, { method: 'notifications/initialized' }, header)).status, header).toBe(202)
      const call = await legacy(
        h,
        { id: 2, method: 'tools/call', params: { name: 'fx_echo', arguments: { message: header } } },
        header,
      )
      expect(call.json.result.content).toEqual([{ type: 'text', text: header }])
    }
  })
})

describe('cancellation', () => {
  it('a client that goes away mid-call cancels the upstream call, on either path, in either era', async () => {
    const sends = [
      (signal: AbortSignal) => modern(h, 'tools/call', { name: 'fx_slow', arguments: { ms: 60_000 } }, {}, 1, signal),
      (signal: AbortSignal) =>
        modern(h, 'tools/call', { name: 'fx_slow', arguments: { ms: 60_000 }, _meta: SDK_META }, {}, 1, signal),
      (signal: AbortSignal) =>
        legacy(
          h,
          { id: 2, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 60_000 } } },
          '2025-06-18',
          signal,
        ),
      (signal: AbortSignal) =>
        legacy(
          h,
          { id: 2, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 60_000 } } },
          false,
          signal,
        ),
    ]
    for (const [i, send] of sends.entries()) {
      const before = h.upstream.cancelled
      const gone = new AbortController()
      const started = h.upstream.slowStarted()
      const pending = send(gone.signal).catch(() => undefined)
      await started
      gone.abort()
      await pending
      expect(h.upstream.cancelled, `send ${i}`).toBe(before + 1)
    }
  })

  it(
    'a 2025 notifications/cancelled reaches the running call of its own session only ' + "(keyed by the token's hash)",
    async () => {
      // joined as `${workspace}/${session}`, these two sessions would be one key: "ws/a/b"
      const mine = await h.sessions.issue('ws/a', 'b', 'claude')
      const theirs = await h.sessions.issue('ws', 'a/b', 'claude')
      const as = (token: string): Harness => ({ ...h, token })
      for (const version of ['2025-06-18', false] as const) {
        const before = h.upstream.cancelled
        const started = h.upstream.slowStarted()
        const pending = legacy(
          as(mine),
          { id: 'c-1', method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 60_000 } } },
          version,
        )
        await started
        const cancel = { method: 'notifications/cancelled', params: { requestId: 'c-1', reason: 'user pressed stop' } }
        expect((await legacy(as(theirs), cancel)).status).toBe(202)
        expect(h.upstream.cancelled).toBe(before)
        expect((await legacy(as(mine), cancel)).status).toBe(202)
        const res = await pending
        expect(res.json.error.message).toMatch(/cancelled by the client/)
        expect(h.upstream.cancelled).toBe(before + 1)
      }
    },
  )
})
