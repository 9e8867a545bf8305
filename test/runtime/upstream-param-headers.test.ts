import { createMcpHandler, Server } from '@modelcontextprotocol/server'
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UpstreamConnection } from '../../src/runtime/upstream/upstream-connection.js'

/**
 * SEP-2243 custom headers from tool parameters: tutti's upstream client sends
 * each `x-mcp-header` argument as `Mcp-Param-<Name>` on a 2026-07-28 remote
 * upstream, from the first call on (a server that checks them would refuse a
 * call without). A real SDK server on loopback, recording what each POST
 * carried.
 */
const REGIONAL = {
  name: 'regional',
  inputSchema: {
    type: 'object' as const,
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      greeting: { type: 'string', 'x-mcp-header': 'Greeting' },
      dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
      note: { type: 'string' },
    },
  },
  // a result the gateway must pass through even though it does not match this schema
  outputSchema: { type: 'object' as const, properties: { n: { type: 'number' } }, required: ['n'] },
}
const PLAIN = { name: 'plain', inputSchema: { type: 'object' as const, properties: { region: { type: 'string' } } } }

interface Seen {
  method: string
  headers: http.IncomingHttpHeaders
}

let server: http.Server
let url: string
const seen: Seen[] = []

beforeAll(async () => {
  const mcp = createMcpHandler(() => {
    const s = new Server({ name: 'param-headers', version: '1' }, { capabilities: { tools: {} } })
    s.setRequestHandler('tools/list', async () => ({ tools: [REGIONAL, PLAIN] }))
    s.setRequestHandler('tools/call', async (req) => ({
      content: [{ type: 'text', text: `called ${req.params.name}` }],
      structuredContent: { unexpected: true },
    }))
    return s
  })
  server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined
    if (body?.method) seen.push({ method: body.method, headers: req.headers })
    const r = await mcp.fetch(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers: req.headers as Record<string, string>,
      }),
      body === undefined ? {} : { parsedBody: body },
    )
    res.writeHead(r.status, Object.fromEntries(r.headers))
    if (r.body) for await (const chunk of r.body) res.write(chunk)
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const paramHeaders = (s: Seen): Record<string, string> =>
  Object.fromEntries(Object.entries(s.headers).filter(([k]) => k.startsWith('mcp-param-')) as [string, string][])

describe('UpstreamConnection: Mcp-Param-* headers to a 2026-07-28 remote upstream', () => {
  it(
    'every x-mcp-header argument travels as its header on the first call, encoded; none for other tools; results ' +
      'pass through unvalidated',
    async () => {
      const conn = await UpstreamConnection.open({ kind: 'http', key: 'remote', url, headers: {} })
      try {
        expect((await conn.listTools()).map((t) => t.name)).toEqual(['regional', 'plain'])
        seen.length = 0
        const result = await conn.callTool(
          'regional',
          { region: 'eu-west1', priority: 7, greeting: 'Grüße ', dry: false, note: 'not a header' },
          {},
        )
        expect(result).toMatchObject({
          content: [{ type: 'text', text: 'called regional' }],
          structuredContent: { unexpected: true },
        })
        const calls = seen.filter((s) => s.method === 'tools/call')
        // one POST: nothing was refused and retried
        expect(calls).toHaveLength(1)
        expect(calls[0]!.headers['mcp-protocol-version']).toBe('2026-07-28')
        expect(paramHeaders(calls[0]!)).toEqual({
          'mcp-param-region': 'eu-west1',
          'mcp-param-priority': '7',
          'mcp-param-greeting': `=?base64?${Buffer.from('Grüße ').toString('base64')}?=`,
          'mcp-param-dry': 'false',
        })
        // an argument left out sends no header
        await conn.callTool('regional', { region: 'us-east1' }, {})
        expect(paramHeaders(seen.filter((s) => s.method === 'tools/call')[1]!)).toEqual({
          'mcp-param-region': 'us-east1',
        })
        await conn.callTool('plain', { region: 'eu-west1' }, {})
        expect(paramHeaders(seen.filter((s) => s.method === 'tools/call')[2]!)).toEqual({})
      } finally {
        await conn.close(0)
      }
    },
  )
})
