import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { modernNewsConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { MODERN_META, modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, control, tempStateDir } from '../support/tutti.js'

/**
 * A stdio upstream that speaks 2026-07-28 (test/fixtures/modern-news-server.mjs, SDK v2's serveStdio):
 * tutti's server/discover probe finds it out, and the link speaks that era (upstream/upstream-connect.ts).
 * What only that era has reaches tutti's callers: the upstream's own input_required rounds under its own keys,
 * its requestState sealed inside tutti's; list changes and resource updates, which a 2026-07-28 upstream sends
 * only on a subscriptions/listen stream (upstream/upstream-listen.ts). A 2025 caller is asked by request.
 */
const ASKING = {
  ...MODERN_META,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
}
const TODAY = 'news://news/today'
const texts = (result: any): string => result.content.map((c: { text: string }) => c.text).join('')

describe('a stdio upstream that speaks 2026-07-28, through tutti', () => {
  let dir: string
  let owner: Binding
  let other: Binding
  const clients: Client[] = []

  beforeAll(async () => {
    dir = tempStateDir('modern-upstream')
    await installed(dir, modernNewsConnector('news'))
    owner = (await prepared(dir, { provider: 'tutti-agent', session: 'owner' })).mcpServers[0]!
    other = (await prepared(dir, { provider: 'tutti-agent', session: 'other' })).mcpServers[0]!
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    await cleanupState(dir)
  })

  /** A 2025-06-18 client that answers elicitation with `color`. */
  async function legacyAsker(color: string): Promise<Client> {
    const c = new Client(
      { name: 'legacy-asker', version: '1' },
      { capabilities: { elicitation: { form: {} } }, supportedProtocolVersions: ['2025-06-18'] },
    )
    c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { color } }))
    await c.connect(new StreamableHTTPClientTransport(new URL(owner.url), { requestInit: { headers: owner.headers } }))
    clients.push(c)
    return c
  }

  it('the link speaks 2026-07-28; callers of both eras are served over it', async () => {
    const modern = await modernClient(owner)
    clients.push(modern)
    expect(texts(await modern.callTool({ name: 'news_era', arguments: {} }))).toBe('2026-07-28')
    const legacy = await legacyAsker('red')
    expect(texts(await legacy.callTool({ name: 'news_era', arguments: {} }))).toBe('2026-07-28')
    // the status says which revision tutti speaks to it
    const status = await control(dir, 'status')
    const news = status.connectors.find((c: { key: string }) => c.key === 'news')
    expect(news).toMatchObject({ upstream: 'running', protocolVersion: '2026-07-28' })
  })

  it('its input_required round reaches a 2026-07-28 caller under its own key, and the answer goes back', async () => {
    const first = await modernPost(owner, 'tools/call', { name: 'news_ask', arguments: {}, _meta: ASKING })
    const asked = first.json.result
    expect(asked).toMatchObject({
      resultType: 'input_required',
      inputRequests: { fav_color: { method: 'elicitation/create', params: { message: 'Your favourite colour?' } } },
    })
    // the upstream's own state travels sealed inside tutti's, which the caller cannot read or forge
    expect(typeof asked.requestState).toBe('string')
    expect(first.text).not.toContain('asked-for-colour')
    const inputResponses = { fav_color: { action: 'accept', content: { color: 'teal' } } }
    const retry = (binding: Binding, name: string, requestState: string) =>
      modernPost(binding, 'tools/call', { name, arguments: {}, inputResponses, requestState, _meta: ASKING })
    // refused before anything reaches the upstream: tampered, another session's, or for another request
    for (const refused of [
      await retry(owner, 'news_ask', `${asked.requestState}x`),
      await retry(other, 'news_ask', asked.requestState),
      await retry(owner, 'news_era', asked.requestState),
    ])
      expect(refused.json.error, refused.text).toMatchObject({ code: -32602 })
    const answered = await retry(owner, 'news_ask', asked.requestState)
    expect(answered.json.result, answered.text).toMatchObject({ resultType: 'complete' })
    expect(texts(answered.json.result)).toBe('colour teal')
  })

  it('a 2025 caller that takes elicitation is asked by request, and the call completes', async () => {
    const legacy = await legacyAsker('amber')
    expect(texts(await legacy.callTool({ name: 'news_ask', arguments: {} }))).toBe('colour amber')
  })

  it('a caller listening for a resource hears of its updates, and of a tool that appeared', async () => {
    const c = await modernClient(owner)
    clients.push(c)
    const updates: string[] = []
    let toolsChanged = 0
    c.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri))
    c.setNotificationHandler('notifications/tools/list_changed', () => void toolsChanged++)
    await c.listen({ resourceSubscriptions: [TODAY], toolsListChanged: true })
    expect(texts(await c.callTool({ name: 'news_touch', arguments: {} }))).toBe('touched')
    expect(
      await eventually(
        () => updates,
        (u) => u.length > 0,
      ),
    ).toEqual([TODAY])
    expect(texts(await c.callTool({ name: 'news_grow', arguments: {} }))).toBe('grown')
    await eventually(
      () => toolsChanged,
      (n) => n > 0,
    )
    const names = (await c.listTools()).tools.map((t) => t.name)
    expect(names).toContain('news_extra')
  })
})
