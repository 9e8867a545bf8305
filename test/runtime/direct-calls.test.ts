import { Client, SdkError } from '@modelcontextprotocol/client'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UPSTREAM_CLIENT_INFO } from '../../src/runtime/names.js'
import { CallCancel } from '../../src/runtime/registry/call-cancel.js'
import { DIRECT_CALL_IDS, DirectCalls } from '../../src/runtime/upstream/direct-calls.js'
import { ProcessGroupStdioTransport } from '../../src/runtime/upstream/stdio-transport.js'
import { UpstreamConnection } from '../../src/runtime/upstream/upstream-connection.js'
import { until } from '../support/eventually.js'
import { REPO } from '../support/tutti.js'

// A stdio upstream's tools/call goes past the SDK client (direct-calls.ts).
// Held here to what the SDK client answers for the same upstream: two
// processes of test/fixtures/raw-result-server.mjs, one behind an
// UpstreamConnection, one behind the SDK client on the same transport class
// (what UpstreamConnection.callTool was before), every answer compared as
// the bytes it serializes to, every error by class, code, message and data.
const SERVER = path.join(REPO, 'test/fixtures/raw-result-server.mjs')
const LIMITS = { maxMessageBytes: 16 * 1024 * 1024, closeGraceMs: 2_000 }

const text = (t: string) => ({ type: 'text', text: t })
/** Results as upstreams send them, many of which the SDK's decoding changes or refuses. */
const RESULTS: Record<string, unknown> = {
  text: { content: [text('hello')] },
  escapes: { content: [text('quotes " \\ é ✓ 𝄞 \n \u2028 \u0000')] },
  empty: { content: [] },
  texts: { content: [text('a'), text('b')] },
  'is-error': { content: [text('failed')], isError: true },
  'is-error-false': { content: [], isError: false },
  structured: { content: [text('{"n":1}')], structuredContent: { n: 1, nested: { deep: [1, { x: null }] } } },
  'with-meta': { _meta: { trace: 'abc' }, content: [text('m')] },
  'upstream-identity': { _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'up', version: '9' } }, content: [] },
  'meta-progress': { _meta: { trace: 1, progressToken: 7 }, content: [] },
  'out-of-order': { isError: false, content: [{ text: 'x', type: 'text' }], _meta: { a: 1 } },
  'unknown-key': { content: [text('x')], other: 2 },
  'unknown-key-first': { other: 2, content: [text('x')] },
  'result-type': { content: [], resultType: 'complete' },
  contentless: { structuredContent: { a: 1 } },
  'empty-object': {},
  'structured-array': { content: [], structuredContent: [1, 2] },
  'structured-proto': JSON.parse('{"content":[],"structuredContent":{"__proto__":{"x":1},"a":1}}'),
  image: { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] },
  'bad-base64': { content: [{ type: 'image', data: '!!', mimeType: 'image/png' }] },
  'resource-link': { content: [{ type: 'resource_link', uri: 'file:///x', name: 'x', mimeType: 'text/plain' }] },
  resource: { content: [{ type: 'resource', resource: { uri: 'file:///x', text: 'abc', mimeType: 'text/plain' } }] },
  annotated: { content: [{ type: 'text', text: 'a', annotations: { audience: ['user'], priority: 0.5 } }] },
  'text-meta': { content: [{ type: 'text', text: 'a', _meta: { k: 1 } }] },
  'text-extra': { content: [{ type: 'text', text: 'a', extra: true }] },
  'text-order': { content: [{ text: 'a', type: 'text' }] },
  'text-number': { content: [text('ok'), { type: 'text', text: 5 }] },
  'is-error-string': { content: [], isError: 'yes' },
  'unknown-block': { content: [{ type: 'video', url: 'x' }] },
}
/** Answers the SDK client does not route as answers (it reports them; the call waits on). */
const UNROUTED: Record<string, string> = {
  'no-result': '{"jsonrpc":"2.0","id":__ID__}',
  'meta-null': '{"jsonrpc":"2.0","id":__ID__,"result":{"_meta":null,"content":[]}}',
  'result-array': '{"jsonrpc":"2.0","id":__ID__,"result":[]}',
  'extra-key': '{"jsonrpc":"2.0","id":__ID__,"result":{"content":[]},"extra":1}',
  'error-no-message': '{"jsonrpc":"2.0","id":__ID__,"error":{"code":-32603}}',
}
const ERRORS: Record<string, unknown> = {
  'error-data': { code: -32602, message: 'bad args', data: { field: 'x' } },
  'error-plain': { code: -32000, message: 'server error' },
  'error-url-elicitation': {
    code: -32042,
    message: 'go there',
    data: { elicitations: [{ mode: 'url', elicitationId: 'e', url: 'https://x', message: 'm' }] },
  },
  'error-resource': { code: -32002, message: 'gone', data: { uri: 'file:///x' } },
  'error-extra': { code: -32603, message: 'x', data: 1, extra: 'dropped' },
}

let dir: string
let trace: string
let direct: UpstreamConnection
let sdk: Client
let sdkTransport: ProcessGroupStdioTransport

function spec(traceFile: string) {
  return {
    command: process.execPath,
    args: [SERVER],
    cwd: dir,
    env: { RAW_RESULTS: path.join(dir, 'results.json'), RAW_TRACE: traceFile },
  }
}
const lines = (file: string): string[] =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
const calls = (file: string) =>
  lines(file)
    .map((l) => JSON.parse(l))
    .filter((m) => m.method === 'tools/call')

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-direct-calls-'))
  trace = path.join(dir, 'direct.trace')
  const table = Object.fromEntries([
    ...Object.entries(RESULTS).map(([k, result]) => [k, { result }]),
    ...Object.entries(ERRORS).map(([k, error]) => [k, { error }]),
  ])
  for (const [name, line] of Object.entries(UNROUTED)) table[name] = { line }
  fs.writeFileSync(path.join(dir, 'results.json'), JSON.stringify(table))
  direct = await UpstreamConnection.open({ kind: 'stdio', key: 'raw', ...spec(trace) })
  sdkTransport = new ProcessGroupStdioTransport({ ...spec(path.join(dir, 'sdk.trace')), ...LIMITS })
  sdk = new Client({ ...UPSTREAM_CLIENT_INFO })
  await sdk.connect(sdkTransport)
})
afterAll(async () => {
  await direct?.close(0)
  await sdk?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

type Settled =
  | { ok: true; bytes: string }
  | { ok: false; error: { class: string; code: unknown; message: string; data: unknown } }
async function settle(p: Promise<unknown>): Promise<Settled> {
  try {
    return { ok: true, bytes: JSON.stringify(await p) }
  } catch (err) {
    const e = err as Error & { code?: unknown; data?: unknown }
    return { ok: false, error: { class: e.constructor.name, code: e.code, message: e.message, data: e.data } }
  }
}
const viaSdk = (name: string, args?: Record<string, unknown>, signal?: AbortSignal) =>
  sdk.callTool(args === undefined ? { name } : { name, arguments: args }, {
    timeout: 60_000,
    ...(signal ? { signal } : {}),
  })

describe('direct tools/call: the SDK client’s answer, byte for byte', () => {
  it.each([...Object.keys(RESULTS), ...Object.keys(ERRORS)])('%s', async (name) => {
    const mine = await settle(direct.callTool(name, {}, {}))
    const theirs = await settle(viaSdk(name, {}))
    expect(mine).toEqual(theirs)
  })

  it('a result of 3 MiB', async () => {
    const mine = await settle(direct.callTool('big', { bytes: 3 * 1024 * 1024 }, {}))
    expect(mine.ok && mine.bytes.length).toBeGreaterThan(3 * 1024 * 1024)
    expect(mine).toEqual(await settle(viaSdk('big', { bytes: 3 * 1024 * 1024 })))
  })

  it('the upstream gets the SDK client’s request bytes, under an id of the direct range', async () => {
    const args = { message: 'same bytes', nested: { list: [1, 'two', null] } }
    const mine = (await direct.callTool('wire', args, {})) as { content: Array<{ text: string }> }
    const theirs = (await viaSdk('wire', args)) as { content: Array<{ text: string }> }
    const id = JSON.parse(mine.content[0]!.text).id
    expect(id).toBeGreaterThanOrEqual(DIRECT_CALL_IDS.first)
    expect(id).toBeLessThanOrEqual(DIRECT_CALL_IDS.last)
    const withoutId = (line: string) => line.replace(/"id":\d+/, '"id":_')
    expect(withoutId(mine.content[0]!.text)).toBe(withoutId(theirs.content[0]!.text))
    // a call without arguments carries the name only, as the SDK's does
    const bare = (await direct.callTool('wire', undefined, {})) as { content: Array<{ text: string }> }
    expect(JSON.parse(bare.content[0]!.text).params).toEqual({ name: 'wire' })
  })

  it(
    'every tools/call of the connection went direct; ' + 'initialize and tools/list stayed with the SDK client',
    async () => {
      await direct.listTools()
      const seen = lines(trace).map((l) => JSON.parse(l))
      const toolCalls = seen.filter((m) => m.method === 'tools/call')
      expect(toolCalls.length).toBeGreaterThan(Object.keys(RESULTS).length)
      for (const m of toolCalls) expect(m.id).toBeGreaterThanOrEqual(DIRECT_CALL_IDS.first)
      for (const m of seen.filter((x) => x.method === 'initialize' || x.method === 'tools/list'))
        expect(m.id).toBeLessThan(100)
    },
  )

  it.each(Object.keys(UNROUTED))(
    'an answer the SDK would not route (%s) leaves the call waiting, on both, until it is cancelled',
    async (name) => {
      const mineAbort = new AbortController()
      const theirsAbort = new AbortController()
      const mine = settle(direct.callTool(name, {}, { signal: mineAbort.signal }))
      const theirs = settle(viaSdk(name, {}, theirsAbort.signal))
      let settledYet = 0
      void mine.then(() => settledYet++)
      void theirs.then(() => settledYet++)
      // one pipe, in order: once a later call is answered, the unrouted answer has been read
      await direct.callTool('text', {}, {})
      await viaSdk('text', {})
      await new Promise((r) => setImmediate(r))
      expect(settledYet).toBe(0)
      mineAbort.abort(new Error('stop'))
      theirsAbort.abort(new Error('stop'))
      expect(await mine).toEqual(await theirs)
    },
  )
})

describe('direct tools/call: cancel, timeout, close', () => {
  it(
    'aborting sends notifications/cancelled for the direct id ' +
      '(the upstream’s own trace), and rejects as the SDK does',
    async () => {
      const before = calls(trace).length
      const abort = new AbortController()
      const mine = settle(direct.callTool('hold', {}, { signal: abort.signal }))
      expect(await until(() => calls(trace).length === before + 1)).toBe(true)
      const held = calls(trace).at(-1)!
      abort.abort(new Error('user pressed stop'))
      const sdkTrace = path.join(dir, 'sdk.trace')
      const theirsAbort = new AbortController()
      const theirs = settle(viaSdk('hold', {}, theirsAbort.signal))
      const sdkBefore = calls(sdkTrace).length
      expect(await until(() => calls(sdkTrace).length >= sdkBefore)).toBe(true)
      theirsAbort.abort(new Error('user pressed stop'))
      expect(await mine).toEqual(await theirs)
      const cancelled = () =>
        lines(trace)
          .map((l) => JSON.parse(l))
          .filter((m) => m.method === 'notifications/cancelled')
      expect(await until(() => cancelled().some((m) => m.params.requestId === held.id))).toBe(true)
      expect(cancelled().find((m) => m.params.requestId === held.id).params.reason).toBe('Error: user pressed stop')
    },
  )

  it(
    'a CallCancel is listened to as it is (no AbortSignal is made), ' + 'and cancelling it reaches the upstream',
    async () => {
      const before = calls(trace).length
      const cancel = new CallCancel()
      let signalsRead = 0
      const options = {
        cancel,
        get signal() {
          signalsRead++
          return cancel.signal
        },
      }
      expect(await direct.callTool('text', {}, options)).toEqual(RESULTS.text)
      const held = settle(direct.callTool('hold', {}, options))
      expect(await until(() => calls(trace).length === before + 2)).toBe(true)
      const id = calls(trace).at(-1)!.id
      cancel.cancel(new Error('the client went away'))
      expect(await held).toEqual({
        ok: false,
        error: { class: 'SdkError', code: 'REQUEST_TIMEOUT', message: 'Error: the client went away', data: undefined },
      })
      const cancelled = () =>
        lines(trace)
          .map((l) => JSON.parse(l))
          .filter((m) => m.method === 'notifications/cancelled' && m.params.requestId === id)
      expect(await until(() => cancelled().length === 1)).toBe(true)
      expect(signalsRead).toBe(0)
    },
  )

  it('a signal already aborted sends nothing', async () => {
    const before = calls(trace).length
    const abort = new AbortController()
    abort.abort(new Error('too late'))
    const mine = await settle(direct.callTool('text', {}, { signal: abort.signal }))
    expect(mine).toEqual(await settle(viaSdk('text', {}, abort.signal)))
    await direct.callTool('text', {}, {})
    expect(calls(trace).length).toBe(before + 1)
  })

  it('a call past its timeout is cancelled at the upstream and fails as the SDK’s does', async () => {
    const ownTrace = path.join(dir, 'timeout.trace')
    const transport = new ProcessGroupStdioTransport({ ...spec(ownTrace), ...LIMITS })
    const client = new Client({ ...UPSTREAM_CLIENT_INFO })
    await client.connect(transport)
    try {
      const calls = new DirectCalls(transport, client, 50)
      const err = (await calls.call({ name: 'hold' }, {}).catch((e: unknown) => e)) as SdkError
      expect(err).toBeInstanceOf(SdkError)
      expect([err.code, err.message, err.data]).toEqual(['REQUEST_TIMEOUT', 'Request timed out', { timeout: 50 }])
      expect(await until(() => lines(ownTrace).some((l) => l.includes('notifications/cancelled')))).toBe(true)
      expect(calls.inFlight).toBe(0)
    } finally {
      await client.close()
    }
  })

  it('calls in flight when the process dies fail with the SDK’s ConnectionClosed', async () => {
    const conn = await UpstreamConnection.open({ kind: 'stdio', key: 'raw', ...spec(path.join(dir, 'dies.trace')) })
    try {
      const pending = [settle(conn.callTool('hold', {}, {})), settle(conn.callTool('hold', {}, {}))]
      expect(await until(() => calls(path.join(dir, 'dies.trace')).length === 2)).toBe(true)
      process.kill(conn.pid!, 'SIGKILL')
      for (const outcome of await Promise.all(pending))
        expect(outcome).toEqual({
          ok: false,
          error: { class: 'SdkError', code: 'CONNECTION_CLOSED', message: 'Connection closed', data: undefined },
        })
    } finally {
      await conn.close(0)
    }
  })
})

describe('direct tools/call on a 2026-07-28 link: the SDK client’s answer there, byte for byte', () => {
  let modern: UpstreamConnection
  let modernSdk: Client
  const modernTrace = () => path.join(dir, 'modern.trace')
  const modernSpec = (file: string) => ({ ...spec(file), env: { ...spec(file).env, RAW_ERA: 'modern' } })
  beforeAll(async () => {
    modern = await UpstreamConnection.open({ kind: 'stdio', key: 'raw', ...modernSpec(modernTrace()) })
    const transport = new ProcessGroupStdioTransport({ ...modernSpec(path.join(dir, 'modern-sdk.trace')), ...LIMITS })
    modernSdk = new Client({ ...UPSTREAM_CLIENT_INFO }, { versionNegotiation: { mode: 'auto' } })
    await modernSdk.connect(transport)
  })
  afterAll(async () => {
    await modern?.close(0)
    await modernSdk?.close()
  })
  const viaModernSdk = (name: string, args: Record<string, unknown>) =>
    modernSdk.callTool({ name, arguments: args }, { timeout: 60_000 })

  it('both speak 2026-07-28 to the fixture', () => {
    expect(modern.protocolVersion).toBe('2026-07-28')
    expect(modernSdk.getNegotiatedProtocolVersion()).toBe('2026-07-28')
  })

  it.each([...Object.keys(RESULTS), ...Object.keys(ERRORS)])('%s', async (name) => {
    expect(await settle(modern.callTool(name, {}, {}))).toEqual(await settle(viaModernSdk(name, {})))
  })

  it('the upstream gets the SDK client’s request bytes, envelope and all, with a direct id', async () => {
    const args = { message: 'same bytes' }
    const meta = { progressToken: 'p', 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } }
    const relay = { session: 's', progress: () => undefined, capabilities: { sampling: {} } }
    const mine = (await modern.callTool('wire', args, { relay })) as { content: Array<{ text: string }> }
    const theirs = (await modernSdk.callTool({
      name: 'wire',
      arguments: args,
      _meta: { ...meta, progressToken: 'tutti-1' },
    })) as {
      content: Array<{ text: string }>
    }
    const sent = JSON.parse(mine.content[0]!.text)
    expect(sent.id).toBeGreaterThanOrEqual(DIRECT_CALL_IDS.first)
    const withoutId = (line: string) => line.replace(/"id":\d+/, '"id":_')
    expect(withoutId(mine.content[0]!.text)).toBe(withoutId(theirs.content[0]!.text))
    expect(Object.keys(sent.params._meta)).toEqual([
      'io.modelcontextprotocol/protocolVersion',
      'io.modelcontextprotocol/clientInfo',
      'io.modelcontextprotocol/clientCapabilities',
      'progressToken',
    ])
  })
})

describe('direct tools/call: only where the SDK would decode as the 2025 era', () => {
  it('an upstream that answers initialize with 2025-06-18 goes direct too', async () => {
    const t = path.join(dir, 'v0618.trace')
    const conn = await UpstreamConnection.open({
      kind: 'stdio',
      key: 'raw',
      ...spec(t),
      env: { ...spec(t).env, RAW_VERSION: '2025-06-18' },
    })
    try {
      expect(await conn.callTool('text', {}, {})).toEqual(RESULTS.text)
      expect(calls(t)[0].id).toBeGreaterThanOrEqual(DIRECT_CALL_IDS.first)
    } finally {
      await conn.close(0)
    }
  })
})
