import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultConnector } from '../support/fixture-connector.js'
import { legacyPost, MODERN_META, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

// tools/call is served by a fast path when the request is exactly right, and
// by the SDK otherwise. The full parity matrix (every result shape and error
// code, both eras) is in-process: test/runtime/mcp-endpoint-parity.test.ts.
// Here: the same holds with a real daemon and a real upstream, and a
// cancellation reaches the real upstream process.
describe('tools/call: fast path and SDK path agree, against the real daemon', () => {
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

  it('tools/list: same bytes on both paths, both eras', async () => {
    const fast = await modernPost(binding, 'tools/list')
    const sdk = await modernPost(binding, 'tools/list', { _meta: sdkMeta })
    expect(fast.json.result.tools.length).toBeGreaterThan(5)
    expect(fast.text).toBe(sdk.text)
    const legacyFast = await legacyPost(binding, { id: 3, method: 'tools/list' }, { 'mcp-protocol-version': '2025-06-18' })
    const legacySdk = await legacyPost(binding, { id: 3, method: 'tools/list' })
    expect(legacyFast.text).toBe(legacySdk.text)
  })

  async function cancellations(): Promise<number> {
    const res = await modernPost(binding, 'tools/call', { name: 'fx_cancellations', arguments: {} })
    return Number(res.json.result.content[0].text)
  }

  /** Polls with a generous bound: only a failing run waits it out. */
  async function until(fn: () => Promise<number>, target: number, ms = 15_000): Promise<number> {
    const deadline = Date.now() + ms
    for (;;) {
      const v = await fn()
      if (v >= target || Date.now() > deadline) return v
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  function abandonedCall(headers: Record<string, string>, body: unknown, afterMs: number): Promise<void> {
    const u = new URL(binding.url)
    return new Promise((resolve) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...binding.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } })
      req.on('error', () => resolve())
      req.end(JSON.stringify(body))
      setTimeout(() => {
        req.destroy()
        resolve()
      }, afterMs)
    })
  }

  /**
   * Goes away mid-call; returns how many calls the upstream saw cancelled.
   * Nothing outside tells when the call has reached the upstream, so a
   * client that went away before it did (a slow machine) tries again, later.
   */
  async function disconnectMidCall(headers: Record<string, string>, body: unknown): Promise<number> {
    for (let wait = 250; ; wait *= 2) {
      const before = await cancellations()
      await abandonedCall(headers, body, wait)
      const after = await until(cancellations, before + 1)
      if (after > before || wait >= 8_000) return after - before
    }
  }

  it('a client that disconnects mid-call cancels the real upstream call (both eras)', { timeout: 180_000 }, async () => {
    const modern = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 }, _meta: MODERN_META } }
    expect(await disconnectMidCall({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx_slow' }, modern)).toBe(1)
    const legacy = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 } } }
    expect(await disconnectMidCall({ 'mcp-protocol-version': '2025-06-18' }, legacy)).toBe(1)
  })

  it('a 2025-era notifications/cancelled reaches the running call in the real upstream', async () => {
    const before = await cancellations()
    const h = { 'mcp-protocol-version': '2025-06-18' }
    let settled = false
    const pending = legacyPost(binding, { id: 'c-1', method: 'tools/call', params: { name: 'fx_slow', arguments: { ms: 30_000 } } }, h).finally(() => (settled = true))
    // the cancel may arrive before the call is registered (a no-op): it is sent again until the call ends
    for (let wait = 100; !settled; wait = Math.min(2 * wait, 2_000)) {
      const ack = await legacyPost(binding, { method: 'notifications/cancelled', params: { requestId: 'c-1', reason: 'user pressed stop' } }, h)
      expect(ack.status).toBe(202)
      await Promise.race([pending, new Promise((r) => setTimeout(r, wait))])
    }
    const res = await pending
    expect(res.json.error.message).toMatch(/cancelled|abort/i)
    expect(await until(cancellations, before + 1)).toBe(before + 1)
  })
})
