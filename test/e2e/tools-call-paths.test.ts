import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultConnector } from '../support/fixture-connector.js'
import { legacyPost, MODERN_META, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

// tools/call is served by a fast path when the request is exactly right, and
// by the SDK otherwise. The two must be indistinguishable to a client.
describe('tools/call: fast path and SDK path agree', () => {
  let dir: string
  let binding: Binding
  beforeAll(async () => {
    dir = tempStateDir('paths')
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx' })])
    binding = (await tuttiJson(dir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'paths'])).mcpServers[0]
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it.each([
    ['an empty clientInfo', { 'io.modelcontextprotocol/clientInfo': {} }],
    ['a non-object capability', { 'io.modelcontextprotocol/clientCapabilities': { sampling: 'yes' } }],
  ])('modern with %s: the same answer on both paths', async (_label, metaPatch) => {
    const fast = await modernPost(binding, 'tools/call', { name: 'fx_echo', arguments: { message: 'm' }, _meta: { ...MODERN_META, ...metaPatch } })
    const sdk = await modernPost(binding, 'tools/call', { name: 'fx_echo', arguments: { message: 'm' }, _meta: { ...MODERN_META, ...metaPatch, 'io.modelcontextprotocol/logLevel': 'error' } })
    expect(fast.status).toBe(sdk.status)
    expect(fast.json).toEqual(sdk.json)
  })

  // an extra _meta key (or a plain Accept) is legal but sends the request down the SDK path
  const sdkMeta = { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' }

  it.each([
    ['echo', { message: 'same either way' }],
    ['fail', {}],
    ['nope', {}],
    ['reject', { code: -32021 }],
    ['reject', { code: -32042 }],
    ['reject', { code: -32002 }],
    ['reject', { code: -32602 }],
  ])('modern %s %j: same status and JSON body on both paths', async (tool, args) => {
    const fast = await modernPost(binding, 'tools/call', { name: `fx_${tool}`, arguments: args })
    const sdk = await modernPost(binding, 'tools/call', { name: `fx_${tool}`, arguments: args, _meta: sdkMeta })
    expect(fast.status).toBe(sdk.status)
    expect(fast.headers['content-type']).toBe(sdk.headers['content-type'])
    expect(fast.json).toEqual(sdk.json)
  })

  it.each([
    ['echo', { message: 'same either way' }],
    ['fail', {}],
    ['reject', { code: -32021 }],
  ])('2025-06-18 %s %j: same SSE frame on both paths', async (tool, args) => {
    const body = { id: 5, method: 'tools/call', params: { name: `fx_${tool}`, arguments: args } }
    const fast = await legacyPost(binding, body, { 'mcp-protocol-version': '2025-06-18' })
    // without the version header (allowed in 2025) the request takes the SDK path
    const sdk = await legacyPost(binding, body)
    expect(fast.status).toBe(200)
    expect(fast.headers['content-type']).toBe('text/event-stream')
    expect(fast.text).toBe(sdk.text.replace(/\r\n/g, '\n'))
  })

  it('tools/list: same bytes on both paths, both eras', async () => {
    const fast = await modernPost(binding, 'tools/list')
    const sdk = await modernPost(binding, 'tools/list', { _meta: sdkMeta })
    expect(fast.json.result.tools.length).toBeGreaterThan(5)
    expect(fast.json).toEqual(sdk.json)
    const legacyFast = await legacyPost(binding, { id: 3, method: 'tools/list' }, { 'mcp-protocol-version': '2025-06-18' })
    const legacySdk = await legacyPost(binding, { id: 3, method: 'tools/list' })
    expect(legacyFast.text).toBe(legacySdk.text.replace(/\r\n/g, '\n'))
  })

  async function cancellations(): Promise<number> {
    const res = await modernPost(binding, 'tools/call', { name: 'fx_cancellations', arguments: {} })
    return Number(res.json.result.content[0].text)
  }

  function abandonedCall(headers: Record<string, string>, body: unknown): Promise<void> {
    const u = new URL(binding.url)
    return new Promise((resolve) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...binding.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } })
      req.on('error', () => resolve())
      req.end(JSON.stringify(body))
      setTimeout(() => {
        req.destroy()
        resolve()
      }, 300)
    })
  }

  async function until(fn: () => Promise<number>, target: number): Promise<number> {
    for (let i = 0; i < 50; i++) {
      const v = await fn()
      if (v >= target) return v
      await new Promise((r) => setTimeout(r, 100))
    }
    return fn()
  }

  it('a client that disconnects mid-call cancels the upstream call (both eras)', async () => {
    const before = await cancellations()
    await abandonedCall(
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx_slow' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 }, _meta: MODERN_META } },
    )
    expect(await until(cancellations, before + 1)).toBe(before + 1)
    await abandonedCall({ 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 } } })
    expect(await until(cancellations, before + 2)).toBe(before + 2)
  })

  it('a 2025-era notifications/cancelled reaches the running call', async () => {
    const before = await cancellations()
    const h = { 'mcp-protocol-version': '2025-06-18' }
    const pending = legacyPost(binding, { id: 'c-1', method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 } } }, h)
    await new Promise((r) => setTimeout(r, 300))
    const ack = await legacyPost(binding, { method: 'notifications/cancelled', params: { requestId: 'c-1', reason: 'user pressed stop' } }, h)
    expect(ack.status).toBe(202)
    const res = await pending
    expect(res.json.error.message).toMatch(/cancelled|abort/i)
    expect(await until(cancellations, before + 1)).toBe(before + 1)
  })
})
