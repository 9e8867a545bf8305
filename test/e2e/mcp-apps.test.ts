import type { Client } from '@modelcontextprotocol/client'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { legacyClient, modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, EXAMPLES, tempStateDir, tutti } from '../support/tutti.js'

/**
 * MCP Apps (SEP-1865) through the connector server (issue 24 item 6), and a
 * session that sees one connector under its server's own names (item 9).
 * The app fixture serves a `ui://` page for its `get-weather` tool, and a
 * `refresh` tool the page itself calls by that name.
 */
describe('MCP Apps and the unprefixed single-connector view', () => {
  let dir: string
  const clients: Client[] = []
  beforeAll(async () => {
    dir = tempStateDir('apps')
    await installed(dir, appConnector('wx'))
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: 'apps-key' } })
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    await cleanupState(dir)
  })
  const session = async (name: string, extra: { as?: string } = {}) =>
    (await prepared(dir, { session: name, ...extra })).mcpServers[0]!
  const client = async (b: Binding, era: 'modern' | 'legacy' = 'modern') => {
    const c = era === 'modern' ? await modernClient(b) : await legacyClient(b)
    clients.push(c)
    return c
  }

  it("a tool's ui resourceUri and the ui:// page it names are rewritten alike, scheme kept", async () => {
    const c = await client(await session('apps-meta'))
    const tool = (await c.listTools()).tools.find((t) => t.name === 'wx_get-weather')!
    expect(tool._meta).toEqual({ ui: { resourceUri: 'ui://wx/weather/card.html' } })
    const page = await c.readResource({ uri: 'ui://wx/weather/card.html' })
    expect(page.contents[0]).toMatchObject({ uri: 'ui://wx/weather/card.html', mimeType: 'text/html;profile=mcp-app' })
  })

  it('an app’s call by its server’s name goes to the connector that served its page, in that session', async () => {
    const app = await session('apps-host')
    const other = await session('apps-other')
    const call = (b: Binding) => modernPost(b, 'tools/call', { name: 'refresh', arguments: {} })
    // no page served yet: an unknown tool like any other
    expect((await call(app)).json.error).toMatchObject({ code: -32602 })
    const page = 'ui://wx/weather/card.html'
    expect((await modernPost(app, 'resources/read', { uri: page }, { 'mcp-name': page })).json.result).toBeDefined()
    expect((await call(app)).json.result.content[0].text).toMatch(/^refreshed \d+$/)
    // the published name keeps working, and another session was served no page
    expect((await modernPost(app, 'tools/call', { name: 'wx_refresh', arguments: {} })).json.result).toBeDefined()
    expect((await call(other)).json.error).toMatchObject({ code: -32602 })
  })

  describe.each(['modern', 'legacy'] as const)('--as everything (%s)', (era) => {
    it('tools, prompts and resource URIs are the server’s own; the other connector is not there', async () => {
      const c = await client(await session(`as-${era}`, { as: 'everything' }), era)
      const tools = (await c.listTools()).tools.map((t) => t.name)
      expect(tools).toContain('echo')
      expect(tools.some((t) => t.startsWith('everything_') || t.includes('weather'))).toBe(false)
      expect(await c.callTool({ name: 'echo', arguments: { message: 'own' } })).toMatchObject({
        content: [{ type: 'text', text: 'Echo: own' }],
      })
      expect((await c.listPrompts()).prompts.map((p) => p.name)).toContain('args-prompt')
      const uris = (await c.listResources()).resources.map((r) => r.uri)
      expect(uris).toContain('demo://resource/static/document/features.md')
      const read = await c.readResource({ uri: 'demo://resource/dynamic/text/2' })
      expect(read.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/text/2' })
      const embedded = await c.getPrompt({
        name: 'resource-prompt',
        arguments: { resourceType: 'Text', resourceId: '4' },
      })
      expect(JSON.stringify(embedded)).toContain('"uri":"demo://resource/dynamic/text/4"')
      const templates = (await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)
      expect(templates).toContain('demo://resource/dynamic/text/{resourceId}')
      const done = await c.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'department', value: 'Eng' },
      })
      expect(done.completion.values).toEqual(['Engineering'])
      await expect(c.callTool({ name: 'everything_echo', arguments: { message: 'x' } })).rejects.toThrow(/unknown tool/)
    })
  })

  it('--as names an installed connector, or exits 2 naming it and changes nothing', async () => {
    const args = ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'bad-as']
    const bad = await tutti(dir, [...args, '--as', 'nope', '--json'])
    expect(bad.code).toBe(2)
    expect(JSON.parse(bad.stdout).error.message).toMatch(/--as: connector "nope" is not installed/)
  })
})
