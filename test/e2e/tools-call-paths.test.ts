import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { legacyPost, MODERN_META, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir } from '../support/tutti.js'

// tools/call is served by a fast path when the request is exactly right, and
// by the SDK otherwise. The full parity matrix (every result shape and error
// code, both eras) is in-process: test/runtime/mcp-endpoint-parity.test.ts.
// Here: the same holds with a real daemon and a real upstream (a result
// cut by the output cap too), and a cancellation reaches the real upstream
// process.
describe('tools/call: fast path and SDK path agree, against the real daemon', () => {
  let dir: string
  let traceDir: string
  let trace: string
  let binding: Binding
  beforeAll(async () => {
    dir = tempStateDir('paths')
    traceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-paths-trace-'))
    trace = path.join(traceDir, 'fx-calls')
    // fx's manifest lets a result of 16 MiB pass whole (mcp.maxResultBytes); fd has the daemon's cap
    const whole = 16 * 1024 * 1024
    await installed(dir, faultConnector({ key: 'fx', env: { FIXTURE_TRACE: trace }, maxResultBytes: whole }))
    await installed(dir, faultConnector({ key: 'fd' }))
    binding = (await prepared(dir, { session: 'paths' })).mcpServers[0]!
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(traceDir, { recursive: true, force: true })
  })

  // an extra _meta key is legal but sends the request down the SDK path
  const sdkMeta = { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' }

  it.each([
    ['echo', { message: 'same either way' }],
    ['reject', { code: -32021 }],
  ])('modern %s %j: same status and JSON body on both paths', async (tool, args) => {
    const fast = await modernPost(binding, 'tools/call', { name: `fx_${tool}`, arguments: args })
    const sdk = await modernPost(binding, 'tools/call', { name: `fx_${tool}`, arguments: args, _meta: sdkMeta })
    expect(fast.status).toBe(sdk.status)
    expect(fast.headers['content-type']).toBe(sdk.headers['content-type'])
    expect(fast.json).toEqual(sdk.json)
  })

  it('2025-06-18: the same SSE frame on both paths', async () => {
    const body = { id: 5, method: 'tools/call', params: { name: 'fx_fail', arguments: {} } }
    const fast = await legacyPost(binding, body, { 'mcp-protocol-version': '2025-06-18' })
    // without the version header (allowed in 2025) the request takes the SDK path
    const sdk = await legacyPost(binding, body)
    expect(fast.status).toBe(200)
    expect(fast.headers['content-type']).toBe('text/event-stream')
    expect(fast.text).toBe(sdk.text)
  })

  // the node front and a direct upstream call on one side, the SDK server on the other: text,
  // structured content with isError, a JSON-RPC error, and a result of 1.5 MiB, in both eras
  const RESULTS: Array<[string, Record<string, unknown>]> = [
    ['echo', { message: 'quotes " \\ é ✓ 𝄞 and a\nline break' }],
    ['fail', {}],
    ['reject', { code: -32602 }],
    ['echo', { message: 'x'.repeat(1536 * 1024) }],
  ]
  it.each(RESULTS)('%s: the same bytes on both paths, in both eras', async (tool, args) => {
    const fast = await modernPost(binding, 'tools/call', { name: `fx_${tool}`, arguments: args })
    const sdk = await modernPost(binding, 'tools/call', { name: `fx_${tool}`, arguments: args, _meta: sdkMeta })
    expect([fast.status, fast.headers['content-type']]).toEqual([sdk.status, sdk.headers['content-type']])
    expect(fast.text).toBe(sdk.text)
    const body = { id: 9, method: 'tools/call', params: { name: `fx_${tool}`, arguments: args } }
    const legacyFast = await legacyPost(binding, body, { 'mcp-protocol-version': '2025-06-18' })
    const legacySdk = await legacyPost(binding, body)
    expect(legacyFast.status).toBe(legacySdk.status)
    expect(legacyFast.text).toBe(legacySdk.text)
    if (tool === 'echo' && String(args.message).length > 1024 * 1024)
      expect(fast.text.length).toBeGreaterThan(1536 * 1024)
  })

  it('a result cut by the cap: the same bytes on both paths, in both eras, but for its stored id', async () => {
    const id = /tutti:\/\/results\/[A-Za-z0-9_-]{22}/g
    const same = (a: string, b: string) => {
      expect(a.length).toBe(b.length)
      expect(a.replace(id, '<id>')).toBe(b.replace(id, '<id>'))
    }
    const args = { message: 'x'.repeat(1536 * 1024) }
    const fast = await modernPost(binding, 'tools/call', { name: 'fd_echo', arguments: args })
    const sdk = await modernPost(binding, 'tools/call', { name: 'fd_echo', arguments: args, _meta: sdkMeta })
    expect([fast.status, fast.headers['content-type']]).toEqual([sdk.status, sdk.headers['content-type']])
    same(fast.text, sdk.text)
    expect(fast.text.length).toBeLessThan(100_300)
    expect(fast.json.result.content.at(-1)).toMatchObject({ type: 'resource_link', uri: expect.stringMatching(id) })
    const body = { id: 9, method: 'tools/call', params: { name: 'fd_echo', arguments: args } }
    const legacyFast = await legacyPost(binding, body, { 'mcp-protocol-version': '2025-06-18' })
    const legacySdk = await legacyPost(binding, body)
    same(legacyFast.text, legacySdk.text)
  })

  it('tools/list: same bytes on both paths, both eras', async () => {
    const fast = await modernPost(binding, 'tools/list')
    const sdk = await modernPost(binding, 'tools/list', { _meta: sdkMeta })
    expect(fast.json.result.tools.length).toBeGreaterThan(5)
    expect(fast.text).toBe(sdk.text)
    const legacyFast = await legacyPost(
      binding,
      { id: 3, method: 'tools/list' },
      { 'mcp-protocol-version': '2025-06-18' },
    )
    const legacySdk = await legacyPost(binding, { id: 3, method: 'tools/list' })
    expect(legacyFast.text).toBe(legacySdk.text)
  })

  async function cancellations(): Promise<number> {
    const res = await modernPost(binding, 'tools/call', { name: 'fx_cancellations', arguments: {} })
    return Number(res.json.result.content[0].text)
  }
  /** How many calls of `tool` the upstream has started (its own trace, written as each call starts). */
  const started = (tool: string): number =>
    fs.existsSync(trace)
      ? fs
          .readFileSync(trace, 'utf8')
          .split('\n')
          .filter((l) => l === tool).length
      : 0

  /** Goes away once the upstream has started the call; returns how many calls the upstream then saw cancelled. */
  async function disconnectMidCall(headers: Record<string, string>, body: unknown): Promise<number> {
    const before = await cancellations()
    const slow = started('slow')
    const u = new URL(binding.url)
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      method: 'POST',
      headers: {
        ...binding.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
    })
    const gone = new Promise<void>((resolve) => req.on('error', () => resolve()).on('close', () => resolve()))
    req.end(JSON.stringify(body))
    expect(await until(() => started('slow') === slow + 1)).toBe(true)
    req.destroy()
    await gone
    return (await eventually(cancellations, (n) => n > before)) - before
  }

  it('a client that disconnects mid-call cancels the real upstream call (both eras)', async () => {
    const modern = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'fx_slow', arguments: { ms: 30_000 }, _meta: MODERN_META },
    }
    expect(
      await disconnectMidCall(
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx_slow' },
        modern,
      ),
    ).toBe(1)
    const legacy = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'fx_slow', arguments: { ms: 30_000 } },
    }
    expect(await disconnectMidCall({ 'mcp-protocol-version': '2025-06-18' }, legacy)).toBe(1)
  })

  it('a 2025-era notifications/cancelled reaches the running call in the real upstream', async () => {
    const before = await cancellations()
    const slow = started('slow')
    const h = { 'mcp-protocol-version': '2025-06-18' }
    const pending = legacyPost(
      binding,
      { id: 'c-1', method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 } } },
      h,
    )
    // the call is registered before it reaches the upstream: once the upstream has it, the cancel finds it
    expect(await until(() => started('slow') === slow + 1)).toBe(true)
    const ack = await legacyPost(
      binding,
      { method: 'notifications/cancelled', params: { requestId: 'c-1', reason: 'user pressed stop' } },
      h,
    )
    expect(ack.status).toBe(202)
    const res = await pending
    expect(res.json.error.message).toMatch(/cancelled|abort/i)
    expect(await eventually(cancellations, (n) => n > before)).toBe(before + 1)
  })
})
