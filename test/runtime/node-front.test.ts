import { Client } from '@modelcontextprotocol/client'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { MAX_RESULT_BYTES_LIMITS } from '../../src/runtime/manifest/schema.js'
import { ConnectorMcpEndpoint } from '../../src/runtime/mcpserver/mcp-endpoint.js'
import { NO_DIRECT_CALLS_ENV, UPSTREAM_CLIENT_INFO } from '../../src/runtime/names.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { RouteClient, ToolCallResult } from '../../src/runtime/registry/route.js'
import { SessionTokens } from '../../src/runtime/sessions/session-tokens.js'
import { DIRECT_CALL_IDS } from '../../src/runtime/upstream/direct-calls.js'
import { ProcessGroupStdioTransport } from '../../src/runtime/upstream/stdio-transport.js'
import { UpstreamConnection } from '../../src/runtime/upstream/upstream-connection.js'
import { REPO } from '../support/tutti.js'
import {
  listenOverNode,
  MODERN_META,
  SDK_META,
  wirePost,
  type NodeServer,
  type WireAnswer,
} from './mcp-endpoint-harness.js'

// The whole hot path against what it replaces, over real HTTP on loopback:
//   now:    the node front, a direct tools/call to a real stdio upstream
//   before: the SDK server path (a request the fast path leaves to it), the
//           SDK client's callTool to a second process of the same upstream
// Same results in, the same bytes out, in both eras.
const SERVER = path.join(REPO, 'test/fixtures/raw-result-server.mjs')
const text = (t: string) => ({ type: 'text', text: t })
const TABLE = {
  text: { result: { content: [text('hello ✓ "quoted"')] } },
  structured: { result: { content: [text('{"n":42}')], structuredContent: { n: 42, list: [1, { deep: null }] } } },
  'is-error': { result: { content: [text('it failed')], structuredContent: { reason: 'on purpose' }, isError: true } },
  'upstream-identity': {
    result: {
      _meta: { trace: 'abc', 'io.modelcontextprotocol/serverInfo': { name: 'up', version: '9' } },
      content: [],
    },
  },
  'resource-link': { result: { content: [{ type: 'resource_link', uri: 'file:///x', name: 'x' }] } },
  error: { error: { code: -32602, message: 'bad args', data: { field: 'x' } } },
  'error-missing': { error: { code: -32021, message: 'missing', data: { x: 1 } } },
}
const LARGE = 1536 * 1024

let dir: string
let trace: string
let direct: UpstreamConnection
let sdkClient: Client
let endpoint: ConnectorMcpEndpoint
let token: string
let node: NodeServer
let h3only: NodeServer
// the standard path (TUTTI_NO_FAST_PATH=1, TUTTI_NO_DIRECT_CALLS=1):
// an endpoint without the fast path, over an upstream the SDK client calls
let standardTrace: string
let standardUpstream: UpstreamConnection
let standardEndpoint: ConnectorMcpEndpoint
let standard: NodeServer

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-node-front-'))
  trace = path.join(dir, 'direct.trace')
  fs.writeFileSync(path.join(dir, 'results.json'), JSON.stringify(TABLE))
  const spec = (t: string) => ({
    command: process.execPath,
    args: [SERVER],
    cwd: dir,
    env: { RAW_RESULTS: path.join(dir, 'results.json'), RAW_TRACE: t },
  })
  direct = await UpstreamConnection.open({ kind: 'stdio', key: 'dx', ...spec(trace) })
  sdkClient = new Client({ ...UPSTREAM_CLIENT_INFO })
  await sdkClient.connect(
    new ProcessGroupStdioTransport({
      ...spec(path.join(dir, 'sdk.trace')),
      maxMessageBytes: 16 * 1024 * 1024,
      closeGraceMs: 2_000,
    }),
  )
  // what UpstreamConnection.callTool was before direct calls
  const viaSdk: RouteClient = {
    callTool: async (name, args, options) =>
      (await sdkClient.callTool(args === undefined ? { name } : { name, arguments: args }, {
        signal: options.signal,
        timeout: 60_000,
      })) as ToolCallResult,
  }
  standardTrace = path.join(dir, 'standard.trace')
  process.env[NO_DIRECT_CALLS_ENV] = '1'
  try {
    standardUpstream = await UpstreamConnection.open({ kind: 'stdio', key: 'nx', ...spec(standardTrace) })
  } finally {
    delete process.env[NO_DIRECT_CALLS_ENV]
  }
  const tools = await direct.listTools()
  const registry = new ConnectorMCPRegistry()
  registry.commit(buildRoute('dx', 1, direct, tools))
  registry.commit(buildRoute('sx', 1, viaSdk, tools))
  registry.commit(buildRoute('nx', 1, standardUpstream, tools))
  const log = createLogger(memorySink([]), undefined, 'mcp', 'debug')
  const sessions = new SessionTokens(path.join(dir, 'sessions.json'), log)
  await sessions.load()
  token = await sessions.issue('ws', 'node-front', 'codex')
  // a result of LARGE bytes passes whole: this is about the bytes on the way (cut results: mcp-endpoint-parity.test.ts)
  const whole = { maxResultBytes: MAX_RESULT_BYTES_LIMITS.max }
  endpoint = new ConnectorMcpEndpoint(registry, sessions, log, undefined, whole)
  node = await listenOverNode(endpoint, { front: true })
  h3only = await listenOverNode(endpoint, { front: false })
  standardEndpoint = new ConnectorMcpEndpoint(registry, sessions, log, undefined, { fastPath: false, ...whole })
  standard = await listenOverNode(standardEndpoint, { front: true })
})
afterAll(async () => {
  await node?.close()
  await h3only?.close()
  await standard?.close()
  await endpoint?.close()
  await standardEndpoint?.close()
  await direct?.close(0)
  await standardUpstream?.close(0)
  await sdkClient?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

type Era = 'modern' | 'legacy'
/**
 * An exactly-right request (the fast path's), or one the SDK path serves (an extra _meta key; no version header in
 * 2025).
 */
async function post(
  server: NodeServer,
  era: Era,
  name: string,
  args: Record<string, unknown>,
  exact: boolean,
): Promise<WireAnswer> {
  const answer = await send(server, era, name, args, exact)
  // a resource URI names its connector (resource-uris.ts): the three connectors serve one upstream answer
  return { ...answer, text: answer.text.replace(/:\/\/(dx|sx|nx)\//g, '://<key>/') }
}

function send(
  server: NodeServer,
  era: Era,
  name: string,
  args: Record<string, unknown>,
  exact: boolean,
): Promise<WireAnswer> {
  const base = {
    host: `127.0.0.1:${server.port}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  }
  if (era === 'modern') {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 11,
      method: 'tools/call',
      params: { name, arguments: args, _meta: exact ? MODERN_META : SDK_META },
    })
    return wirePost(
      server.port,
      { ...base, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
      body,
    )
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name, arguments: args } })
  return wirePost(server.port, exact ? { ...base, 'mcp-protocol-version': '2025-06-18' } : base, body)
}

/** Headers a client can tell apart; framing (length or chunked) and connection handling aside. */
const visible = (a: WireAnswer) =>
  a.rawHeaders.filter((h) => !/^(content-length|transfer-encoding|connection|keep-alive):/i.test(h))

const CASES: Array<[string, Record<string, unknown>, 'front' | 'sdk']> = [
  ['text', {}, 'front'],
  ['structured', {}, 'front'],
  ['is-error', {}, 'front'],
  ['upstream-identity', {}, 'front'],
  ['big', { bytes: LARGE }, 'front'],
  // decoded by the SDK client (key order), then encoded by the fast path
  ['resource-link', {}, 'front'],
  // a JSON-RPC error from the upstream: the SDK encodes it, with the call already made
  ['error', {}, 'sdk'],
  ['error-missing', {}, 'sdk'],
]

describe.each(['modern', 'legacy'] as const)(
  '%s: node front + direct call = SDK path + SDK client, byte for byte',
  (era) => {
    it.each(CASES)('%s', async (tool, args, encodedBy) => {
      const before = { ...node.served }
      const now = await post(node, era, `dx_${tool}`, args, true)
      expect(
        encodedBy === 'front' ? node.served.front - before.front : node.served.handedOver - before.handedOver,
      ).toBe(1)
      const then = await post(h3only, era, `sx_${tool}`, args, false)
      expect(now.status).toBe(then.status)
      expect(visible(now)).toEqual(visible(then))
      expect(now.text).toBe(then.text)
      if (tool === 'big') expect(now.text.length).toBeGreaterThan(LARGE)
    })

    it('the front writes what the h3 fast path wrote for the same request, every header but Date', async () => {
      for (const [tool, args] of CASES) {
        const viaFront = await post(node, era, `dx_${tool}`, args, true)
        const viaH3 = await post(h3only, era, `dx_${tool}`, args, true)
        expect(viaFront.rawHeaders, tool).toEqual(viaH3.rawHeaders)
        expect(viaFront.text, tool).toBe(viaH3.text)
      }
    })
  },
)

it('the calls made through the front reached the upstream directly (the direct id range)', () => {
  const calls = fs
    .readFileSync(trace, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((m) => m.method === 'tools/call')
  expect(calls.length).toBeGreaterThan(CASES.length)
  for (const m of calls) expect(m.id).toBeGreaterThanOrEqual(DIRECT_CALL_IDS.first)
})

const STANDARD = '%s: the standard path (no fast path, no direct calls) gives the same bytes'
describe.each(['modern', 'legacy'] as const)(STANDARD, (era) => {
  it.each(CASES)('%s', async (tool, args) => {
    const before = { ...standard.served }
    const fast = await post(node, era, `dx_${tool}`, args, true)
    const sdk = await post(standard, era, `nx_${tool}`, args, true)
    // the front declined it, and the SDK's handler answered (a streamed web Response; the fast encoder sends a length)
    expect(standard.served.front - before.front).toBe(0)
    expect(standard.served.declined - before.declined).toBe(1)
    expect(sdk.rawHeaders).toContain('Transfer-Encoding: chunked')
    expect(sdk.status).toBe(fast.status)
    expect(visible(sdk)).toEqual(visible(fast))
    expect(sdk.text).toBe(fast.text)
  })
})

it('with TUTTI_NO_DIRECT_CALLS=1 the upstream got the SDK client’s own ids, none of the direct range', () => {
  const lines = fs.readFileSync(standardTrace, 'utf8').split('\n').filter(Boolean)
  const calls = lines.map((l) => JSON.parse(l)).filter((m) => m.method === 'tools/call')
  expect(calls.length).toBeGreaterThanOrEqual(2 * CASES.length)
  for (const m of calls) expect(m.id).toBeLessThan(DIRECT_CALL_IDS.first)
})
