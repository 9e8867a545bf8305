import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import {
  legacy,
  MODERN_META,
  modern,
  SDK_META,
  startEndpoint,
  TOOLS,
  type Answer,
  type Harness,
} from './mcp-endpoint-harness.js'

// A connector's filter decides what its route holds (build-route.ts): what it hides is unknown to
// every serving path, and alwaysLoad's _meta is the same bytes on the fast path and the SDK's, in
// both eras. `fast` says which path answered.
let h: Harness
beforeAll(async () => {
  h = await startEndpoint()
  const filter = { hide: ['reject', 'fail'], alwaysLoad: ['echo', 'fx_structured'] }
  h.registry.commit(buildRoute('fx', 2, h.upstream, TOOLS, filter))
})
afterAll(async () => {
  await h.close()
})

const names = (a: Answer) => a.json.result.tools.map((t: { name: string }) => t.name)
const visible = (a: Answer) => ({ status: a.status, type: a.headers.get('content-type'), text: a.text })

describe('a filtered route on both serving paths', () => {
  it('2026-07-28 tools/list: hidden tools absent, alwaysLoad marked, the same bytes on both paths', async () => {
    const fast = await modern(h, 'tools/list')
    const sdk = await modern(h, 'tools/list', { _meta: SDK_META })
    expect([fast.fast, sdk.fast]).toEqual([true, false])
    expect(visible(fast)).toEqual(visible(sdk))
    expect(names(fast)).not.toContain('fx_reject')
    expect(names(fast)).not.toContain('fx_fail')
    expect(names(fast)).toHaveLength(TOOLS.length - 2)
    const marked = fast.json.result.tools.filter((t: { _meta?: unknown }) => t._meta)
    expect(marked).toEqual([
      expect.objectContaining({ name: 'fx_echo', _meta: { 'anthropic/alwaysLoad': true } }),
      expect.objectContaining({ name: 'fx_structured', _meta: { 'anthropic/alwaysLoad': true } }),
    ])
  })

  it('2025-06-18 tools/list: the same SSE frame on both paths, with the marks', async () => {
    const fast = await legacy(h, { id: 3, method: 'tools/list' })
    const sdk = await legacy(h, { id: 3, method: 'tools/list' }, false)
    expect([fast.fast, sdk.fast]).toEqual([true, false])
    expect(visible(fast)).toEqual(visible(sdk))
    expect(fast.text).toContain('"_meta":{"anthropic/alwaysLoad":true}')
    expect(names(fast)).not.toContain('fx_fail')
  })

  it('a hidden tool is an unknown tool (-32602) on every path, and never reaches the upstream', async () => {
    const before = h.upstream.calls.length
    const params = { name: 'fx_fail', arguments: {} }
    const answers = [
      await modern(h, 'tools/call', params),
      await modern(h, 'tools/call', { ...params, _meta: { ...SDK_META } }),
      await legacy(h, { id: 7, method: 'tools/call', params }),
      await legacy(h, { id: 7, method: 'tools/call', params }, false),
    ]
    for (const a of answers) expect(a.json.error).toMatchObject({ code: -32602, message: 'unknown tool "fx_fail"' })
    expect(answers[0]!.text).toBe(answers[1]!.text)
    expect(answers[2]!.text).toBe(answers[3]!.text)
    expect(h.upstream.calls.length).toBe(before)
    // a tool it lets through is called as always
    const echo = await modern(h, 'tools/call', { name: 'fx_echo', arguments: { message: 'hi' }, _meta: MODERN_META })
    expect(echo.json.result.content).toEqual([{ type: 'text', text: 'hi' }])
  })
})
