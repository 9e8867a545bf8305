import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { H3 } from 'h3'
import { ErrorCodes, fromWire, type WireError } from '../../src/runtime/errors.js'
import type { DaemonContext } from '../../src/runtime/daemon/context.js'
import { createDaemonApp } from '../../src/runtime/daemon/listener/app.js'
import { MCP_PATH } from '../../src/runtime/mcpserver/mcp-endpoint.js'
import {
  legacy,
  listenOverNode,
  MODERN_META,
  modern,
  modernHeaders,
  read,
  request,
  startEndpoint,
  wirePost,
  type Harness,
  type NodeServer,
} from './mcp-endpoint-harness.js'

// The guard in front of the connector MCP server, in-process: the daemon's h3
// app (loopback guard, control routes, the endpoint mounted) driven with
// app.fetch, and the endpoint itself driven with endpoint.handle.
const CONTROL_TOKEN = 'control-token-for-tests'
let h: Harness
let app: H3
beforeAll(async () => {
  h = await startEndpoint()
  const log = { error: () => {}, redactor: { redactString: (s: string) => s } }
  app = createDaemonApp({ log } as unknown as DaemonContext, CONTROL_TOKEN, {
    mount: (a) => a.all(MCP_PATH, (event) => h.endpoint.handle(event.req)),
  })
})
afterAll(async () => {
  await h.close()
})

const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } })
const listHeaders = modernHeaders('tools/list')
// a web Request has no Host until it is sent: set as a client on the wire would
const viaApp = async (urlPath: string, headers: Record<string, string>, body = listBody, method = 'POST') =>
  read(
    await app.fetch(
      new Request(`http://127.0.0.1:7777${urlPath}`, {
        method,
        headers: { host: '127.0.0.1:7777', 'content-type': 'application/json', ...headers },
        ...(method === 'GET' || method === 'DELETE' ? {} : { body }),
      }),
    ),
  )

describe('Host and Origin', () => {
  it.each([
    ['a foreign Host', { host: 'evil.example.com' }],
    ['a Host that only starts like loopback', { host: '127.0.0.1.evil.example.com' }],
    ['a Host with userinfo', { host: 'evil@127.0.0.1:7777' }],
    ['a foreign Origin', { origin: 'http://evil.example.com' }],
    ['a null Origin', { origin: 'null' }],
  ])('%s → 403 FORBIDDEN on every route, before any token is looked at', async (_label, headers) => {
    for (const urlPath of [MCP_PATH, '/control/status', '/nowhere']) {
      const res = await viaApp(urlPath, { ...listHeaders, authorization: `Bearer ${h.token}`, ...headers })
      expect(res.status, urlPath).toBe(403)
      expect(res.json.error.code).toBe('FORBIDDEN')
    }
  })

  it('loopback Host names and a loopback Origin are accepted', async () => {
    for (const host of ['127.0.0.1:7777', 'localhost:7777', '[::1]:7777', 'LOCALHOST']) {
      const res = await viaApp(MCP_PATH, {
        ...listHeaders,
        authorization: `Bearer ${h.token}`,
        host,
        origin: 'http://localhost:7777',
      })
      expect(res.status, host).toBe(200)
    }
  })
})

describe(
  'every code the HTTP layer and the control API answer with is an ErrorCode, ' + 'and survives the wire as itself',
  () => {
    const control = { authorization: `Bearer ${CONTROL_TOKEN}` }
    it.each([
      ['a foreign Host', MCP_PATH, { host: 'evil.example.com' }, '{}', 403, ErrorCodes.FORBIDDEN],
      ['no route', '/nowhere', control, '{}', 404, ErrorCodes.NOT_FOUND],
      ['no control token', '/control/status', {}, '{}', 401, ErrorCodes.UNAUTHORIZED],
      [
        'a session token on the control API',
        '/control/status',
        { authorization: 'Bearer tutti_x' },
        '{}',
        401,
        ErrorCodes.UNAUTHORIZED,
      ],
      ['an unknown message', '/control/invoke', control, '{}', 404, ErrorCodes.UNKNOWN_MESSAGE],
      ['a body over 1 MiB', '/control/status', control, ' '.repeat(1024 * 1024 + 1), 413, ErrorCodes.ARGUMENT_INVALID],
      ['a body that is not JSON', '/control/status', control, '{"a": ', 400, ErrorCodes.ARGUMENT_INVALID],
      ['a request of the wrong shape', '/control/status', control, '{"extra": true}', 400, ErrorCodes.ARGUMENT_INVALID],
    ])('%s → %i %s', async (_label, urlPath, headers, body, status, code) => {
      const res = await viaApp(urlPath, headers, body)
      expect(res.status).toBe(status)
      expect(res.json.error.code).toBe(code)
      expect(fromWire(res.json.error as WireError).code).toBe(code)
    })
  },
)

describe('the session token', () => {
  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer tutti_not-a-real-token' }],
    ['a token of another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['the control token', { authorization: `Bearer ${CONTROL_TOKEN}` }],
  ])('%s → 401 with a Bearer challenge', async (_label, headers) => {
    const res = await viaApp(MCP_PATH, { ...listHeaders, ...headers })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /)
    expect(res.json.error.code).toBe(-32001)
  })

  it('a revoked token → 401; a re-issued one for the same session works', async () => {
    const old = await h.sessions.issue('ws', 'revoked', 'codex')
    const again = await h.sessions.issue('ws', 'revoked', 'codex')
    expect((await viaApp(MCP_PATH, { ...listHeaders, authorization: `Bearer ${old}` })).status).toBe(401)
    expect((await viaApp(MCP_PATH, { ...listHeaders, authorization: `Bearer ${again}` })).status).toBe(200)
    await h.sessions.revoke({ session: 'revoked' })
    expect((await viaApp(MCP_PATH, { ...listHeaders, authorization: `Bearer ${again}` })).status).toBe(401)
  })
})

describe('the request', () => {
  const send = async (init: Parameters<typeof request>[1]) => read(await h.endpoint.handle(request(h.token, init)))

  it.each(['GET', 'DELETE', 'PUT'])('%s → 405 with Allow: POST', async (method) => {
    const res = await viaApp(MCP_PATH, { authorization: `Bearer ${h.token}` }, listBody, method)
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    expect(res.json.error.code).toBe(-32000)
  })

  it('a body over 4 MiB → 413, declared or streamed', async () => {
    const big = ' '.repeat(4 * 1024 * 1024 + 1)
    expect((await send({ headers: { ...listHeaders, 'content-length': String(big.length) }, body: big })).status).toBe(
      413,
    )
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(1024 * 1024).fill(0x20))
        c.close()
      },
    })
    const res = await h.endpoint.handle(
      new Request(request(h.token, { headers: listHeaders }), { body: stream, duplex: 'half' } as RequestInit),
    )
    expect(res.status).toBe(413)
  })

  it.each([
    ['a JSON-RPC batch', `[${listBody},${listBody}]`, -32600],
    ['bad JSON', '{"jsonrpc": "2.0", "id": 1, ', -32700],
    ['a JSON value that is not an object', '5', -32600],
  ])('%s → 400 / %i', async (_label, body, code) => {
    const res = await send({ headers: listHeaders, body })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(code)
  })

  it('an unknown tool → -32602 naming it (both eras)', async () => {
    const res = await modern(h, 'tools/call', { name: 'fx_nope', arguments: {} })
    expect(res.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(/unknown tool "fx_nope"/) })
    expect(
      (await legacy(h, { id: 9, method: 'tools/call', params: { name: 'fx_nope', arguments: {} } })).json.error.code,
    ).toBe(-32602)
  })

  it('a modern request without the whole _meta envelope → 400 / -32602', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    })
    const res = await send({ headers: listHeaders, body })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32602)
  })

  it('a header that disagrees with the body → 400 / -32020', async () => {
    const method = await modern(h, 'tools/list', {}, { 'mcp-method': 'prompts/list' })
    expect([method.status, method.json.error.code]).toEqual([400, -32020])
    const name = await modern(
      h,
      'tools/call',
      { name: 'fx_echo', arguments: { message: 'x' } },
      { 'mcp-name': 'fx_other' },
    )
    expect([name.status, name.json.error.code]).toEqual([400, -32020])
  })

  it(
    'Mcp-Param headers from x-mcp-header: ' + 'checked, base64 decoded, a mismatch → 400 / -32020 naming the problem',
    async () => {
      const call = (headers: Record<string, string>, region = 'us-west1') =>
        modern(h, 'tools/call', { name: 'fx_regional', arguments: { region } }, headers, 7)
      expect((await call({ 'mcp-param-region': 'us-west1' })).json.result.content).toEqual([
        { type: 'text', text: 'region us-west1' },
      ])
      expect(
        (await call({ 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` }, 'Zürich')).json
          .result.content[0].text,
      ).toBe('region Zürich')
      const before = h.upstream.calls.length
      for (const [headers, problem] of [
        [{}, 'param-header-missing'],
        [{ 'mcp-param-region': 'eu-north1' }, 'param-header-mismatch'],
        [{ 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }, 'param-header-invalid-encoding'],
      ] as const) {
        const res = await call(headers)
        expect(res.status).toBe(400)
        expect(res.json).toEqual({
          jsonrpc: '2.0',
          id: 7,
          error: {
            code: -32020,
            message: `Bad Request: the request headers and body disagree: ${problem} for Mcp-Param-Region`,
            data: { mismatch: { header: 'Mcp-Param-Region', body: 'us-west1' } },
          },
        })
      }
      expect(h.upstream.calls.length).toBe(before) // refused before anything was dispatched
    },
  )

  it('an unsupported protocol version → 400 / -32022', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    })
    const res = await send({ headers: { ...listHeaders, 'mcp-protocol-version': '2099-01-01' }, body })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32022)
  })

  it('resources/read of an unknown URI → -32602 naming the URI (both eras)', async () => {
    const uri = 'file:///nope'
    expect((await modern(h, 'resources/read', { uri }, { 'mcp-name': uri })).json.error).toMatchObject({
      code: -32602,
      data: { uri },
    })
    expect((await legacy(h, { id: 4, method: 'resources/read', params: { uri } })).json.error).toMatchObject({
      code: -32602,
      data: { uri },
    })
  })

  it('initialize, ping or an unknown method with a modern envelope → 404 / -32601', async () => {
    for (const method of ['initialize', 'ping', 'unknown/method']) {
      const res = await modern(h, method)
      expect(res.status, method).toBe(404)
      expect(res.json.error.code).toBe(-32601)
    }
  })

  it('no token reaches the log', async () => {
    expect(h.logLines.join('\n')).not.toContain(h.token)
    expect(h.logLines.join('\n')).not.toMatch(/Bearer tutti_/)
  })
})

// The same guard on node's own request: the daemon's listener offers an
// exactly-right request to the node front before h3. Every refusal must be
// what the h3 app answers (the front declines, or the same function refuses),
// and an accepted request must really be served by the front, so that a
// front that skipped a check would serve what h3 refuses.
describe('the node front: the same guard, the same answers', () => {
  let node: NodeServer
  let h3only: NodeServer
  beforeAll(async () => {
    node = await listenOverNode(h.endpoint, { front: true })
    h3only = await listenOverNode(h.endpoint, { front: false })
  })
  afterAll(async () => {
    await node.close()
    await h3only.close()
  })

  const wire = (server: NodeServer, headers: Record<string, string | string[]>, body = listBody) =>
    wirePost(
      server.port,
      {
        host: `127.0.0.1:${server.port}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...listHeaders,
        ...headers,
      },
      body,
    )
  /** The answer of both servers, which must agree; and whether the front answered it itself. */
  async function both(
    headers: Record<string, string | string[]>,
    body = listBody,
  ): Promise<{ status: number; json: any; byFront: boolean }> {
    const before = node.served.front
    const viaNode = await wire(node, headers, body)
    const byFront = node.served.front > before
    const viaH3 = await wire(h3only, headers, body)
    expect(viaNode.status).toBe(viaH3.status)
    expect(viaNode.rawHeaders).toEqual(viaH3.rawHeaders)
    expect(viaNode.text).toBe(viaH3.text)
    return { status: viaNode.status, json: viaNode.json, byFront }
  }

  it('an exactly-right request with a valid token is served by the front, with the bytes h3 sends', async () => {
    const res = await both({ authorization: `Bearer ${h.token}` })
    expect(res.status).toBe(200)
    expect(res.byFront).toBe(true)
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'fx_echo', arguments: { message: 'via node' }, _meta: MODERN_META },
    })
    const echoed = await both(
      { authorization: `Bearer ${h.token}`, ...modernHeaders('tools/call', { name: 'fx_echo' }) },
      call,
    )
    expect([echoed.status, echoed.byFront, echoed.json.result.content]).toEqual([
      200,
      true,
      [{ type: 'text', text: 'via node' }],
    ])
  })

  it.each([
    ['a foreign Host', { host: 'evil.example.com' }, 403],
    ['a Host that only starts like loopback', { host: '127.0.0.1.evil.example.com' }, 403],
    ['a Host with userinfo', { host: 'evil@127.0.0.1:7777' }, 403],
    ['a foreign Origin', { origin: 'http://evil.example.com' }, 403],
    ['a null Origin', { origin: 'null' }, 403],
    ['a loopback Host, then a foreign one', { host: ['127.0.0.1:7777', 'evil.example.com'] }, 403],
  ])('%s → 403, never served by the front', async (_label, headers, status) => {
    const res = await both({ authorization: `Bearer ${h.token}`, ...headers })
    expect(res.status).toBe(status)
    expect(res.json.error.code).toBe('FORBIDDEN')
    expect(res.byFront).toBe(false)
  })

  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer tutti_not-a-real-token' }],
    ['a token of another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['the control token', { authorization: `Bearer ${CONTROL_TOKEN}` }],
  ])('%s → 401 with a Bearer challenge, never served by the front', async (_label, headers) => {
    const res = await both(headers)
    expect(res.status).toBe(401)
    expect(res.json.error.code).toBe(-32001)
    expect(res.byFront).toBe(false)
  })

  it(
    'a valid token followed by another Authorization header → 401 ' + '(h3 reads both), not served by the front',
    async () => {
      const res = await both({ authorization: [`Bearer ${h.token}`, 'Bearer tutti_other'] })
      expect(res.status).toBe(401)
      expect(res.byFront).toBe(false)
    },
  )

  it('a revoked token → 401 at once on the front too, after it was served (and remembered) there', async () => {
    const token = await h.sessions.issue('ws', 'node-revoked', 'codex')
    expect((await both({ authorization: `Bearer ${token}` })).byFront).toBe(true)
    await h.sessions.revoke({ session: 'node-revoked' })
    const res = await both({ authorization: `Bearer ${token}` })
    expect([res.status, res.byFront]).toEqual([401, false])
    // re-issued: the old token is refused, the new one served
    const first = await h.sessions.issue('ws', 'node-reissued', 'codex')
    expect((await both({ authorization: `Bearer ${first}` })).byFront).toBe(true)
    const second = await h.sessions.issue('ws', 'node-reissued', 'codex')
    expect((await both({ authorization: `Bearer ${first}` })).status).toBe(401)
    expect(await both({ authorization: `Bearer ${second}` })).toMatchObject({ status: 200, byFront: true })
  })

  it('a body declared over 4 MiB → 413 unread; bad JSON, a batch → 400: all answered by h3 as before', async () => {
    const auth = { authorization: `Bearer ${h.token}` }
    // only the head is sent: the answer must not wait for a body nobody will read
    const declined = node.served.declined
    const head = await new Promise<string>((resolve, reject) => {
      let got = ''
      const socket = net.connect(node.port, '127.0.0.1', () => {
        socket.write(
          `POST ${MCP_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${node.port}\r\n` +
            `Authorization: Bearer ${h.token}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n` +
            `Mcp-Method: tools/list\r\nContent-Length: ${4 * 1024 * 1024 + 1}\r\n\r\n`,
        )
      })
      socket.on('data', (c: Buffer) => {
        got += c.toString('utf8')
        if (got.includes('\r\n\r\n')) {
          socket.destroy()
          resolve(got)
        }
      })
      socket.on('error', reject)
    })
    expect(head).toMatch(/^HTTP\/1\.1 413 /)
    expect(head.toLowerCase()).toContain('connection: close')
    expect(node.served.declined).toBe(declined + 1)
    for (const [body, status] of [
      ['{"jsonrpc": ', 400],
      [`[${listBody}]`, 400],
      ['5', 400],
    ] as const) {
      const res = await both(auth, body)
      expect([res.status, res.byFront]).toEqual([status, false])
    }
  })

  it('a header that disagrees with the body → 400 / -32020 from either server, and nothing is called', async () => {
    const before = h.upstream.calls.length
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'fx_regional', arguments: { region: 'us-west1' }, _meta: MODERN_META },
    })
    const res = await both(
      {
        authorization: `Bearer ${h.token}`,
        ...modernHeaders('tools/call', { name: 'fx_regional' }),
        'mcp-param-region': 'eu-north1',
      },
      call,
    )
    expect([res.status, res.json.error.code, res.byFront]).toEqual([400, -32020, false])
    expect(h.upstream.calls.length).toBe(before)
  })
})
