import type { Client } from '@modelcontextprotocol/client'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { memoryConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared, uninstalled } from '../support/in-process.js'
import { legacyClient, legacyPost, modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, control, EXAMPLES, tempStateDir, tuttiJson } from '../support/tutti.js'

const KEY = 'sk-everything-0123456789'

describe('the connector MCP server with real upstreams from npm', () => {
  let dir: string
  let binding: Binding
  beforeAll(async () => {
    dir = tempStateDir('mcp')
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: KEY } })
    binding = (await prepared(dir, { provider: 'tutti-agent', session: 'mcp-1' })).mcpServers[0]!
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('2026-07-28: discover → list → call, listChanged advertised', async () => {
    const client = await modernClient(binding)
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toContain('everything_echo')
    expect(names).toContain('everything_get-sum')
    // every tool carries its connector's key (other tests of this file may have installed theirs)
    const keys = (await control(dir, 'status')).connectors.map((c: { key: string }) => c.key)
    expect(names.filter((n) => !keys.some((k: string) => n.startsWith(`${k}_`)))).toEqual([])
    const echo = tools.find((t) => t.name === 'everything_echo')!
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } })
    const result = await client.callTool({ name: 'everything_echo', arguments: { message: 'hi there' } })
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: hi there' }])
    const sum = await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 40 } })
    expect(JSON.stringify(sum.content)).toContain('42')
    await client.close()
  })

  it('2025-06-18 with the SDK client: initialize → list → call, listChanged false', async () => {
    const client = await legacyClient(binding)
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-06-18')
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain('everything_echo')
    expect((await client.callTool({ name: 'everything_echo', arguments: { message: 'old era' } })).content).toEqual([
      { type: 'text', text: 'Echo: old era' },
    ])
    await client.close()
  })

  it(
    '2025-06-18 raw: initialize (asking 2025-11-25) is answered 2025-06-18; initialized, ping, list, call, the ' +
      "server's prompts, resources and templates with the Skill's file",
    async () => {
      const init = await legacyPost(binding, {
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      })
      expect(init.status).toBe(200)
      expect(init.json.result.protocolVersion).toBe('2025-06-18')
      expect(init.json.result.serverInfo.name).toBe('connector')
      expect(init.headers['mcp-session-id']).toBeUndefined()
      const h = { 'mcp-protocol-version': '2025-06-18' }
      expect((await legacyPost(binding, { method: 'notifications/initialized' }, h)).status).toBe(202)
      expect((await legacyPost(binding, { id: 2, method: 'ping' }, h)).json.result).toEqual({})
      const list = await legacyPost(binding, { id: 3, method: 'tools/list' }, h)
      expect(list.json.result.tools.map((t: { name: string }) => t.name)).toContain('everything_echo')
      const call = await legacyPost(
        binding,
        { id: 4, method: 'tools/call', params: { name: 'everything_echo', arguments: { message: 'raw' } } },
        h,
      )
      expect(call.json.result.content).toEqual([{ type: 'text', text: 'Echo: raw' }])
      // the server's own resources, and the connector's Skill served over MCP (the skills extension)
      const resources = (await legacyPost(binding, { id: 5, method: 'resources/list' }, h)).json.result.resources
      expect(resources.map((r: { uri: string }) => r.uri)).toContain('skill://everything/everything-tour/SKILL.md')
      expect(resources.map((r: { uri: string }) => r.uri)).toContain(
        'demo://everything/resource/static/document/features.md',
      )
      const templates = (await legacyPost(binding, { id: 6, method: 'resources/templates/list' }, h)).json.result
      expect(templates.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).toContain(
        'demo://everything/resource/dynamic/text/{resourceId}',
      )
      const prompts = (await legacyPost(binding, { id: 7, method: 'prompts/list' }, h)).json.result.prompts
      expect(prompts.map((p: { name: string }) => p.name)).toContain('everything_simple-prompt')
    },
  )

  it(
    'a 2025 client that keeps its own revision ' +
      '(2025-11-25, 2025-03-26) in the header after the handshake is still served',
    async () => {
      for (const asked of ['2025-11-25', '2025-03-26', '2024-11-05']) {
        const init = await legacyPost(binding, {
          id: 1,
          method: 'initialize',
          params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        })
        expect(init.json.result.protocolVersion, asked).toBe('2025-06-18')
      }
      for (const header of ['2025-11-25', '2025-03-26']) {
        const h = { 'mcp-protocol-version': header }
        expect((await legacyPost(binding, { method: 'notifications/initialized' }, h)).status, header).toBe(202)
        const call = await legacyPost(
          binding,
          { id: 2, method: 'tools/call', params: { name: 'everything_echo', arguments: { message: header } } },
          h,
        )
        expect(call.json.result.content).toEqual([{ type: 'text', text: `Echo: ${header}` }])
      }
    },
  )

  it('a 2026-07-28 listen stream gets exactly one list_changed per real change of a second connector', async () => {
    const client = await modernClient(binding)
    const changes: unknown[] = []
    client.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n.params))
    const sub = await client.listen({ toolsListChanged: true })
    expect(sub.honoredFilter).toMatchObject({ toolsListChanged: true })
    const names = async () => (await client.listTools()).tools.map((t) => t.name)
    // "exactly one per real change": each expected notice is waited for (eventually); that no other one
    // follows a step can only be shown by a quiet period, since notices carry nothing that tells them apart
    const settle = () => new Promise((r) => setTimeout(r, 400))
    // a notice of an earlier test's commit may reach a stream opened just after it: it arrives before the count starts
    await settle()
    changes.length = 0

    await installed(dir, memoryConnector('memory'))
    expect(
      (await eventually(
        () => changes.length,
        (n) => n >= 1,
      )) && changes.length,
    ).toBe(1)
    expect(await names()).toContain('memory_read_graph')

    await installed(dir, memoryConnector('vault', 'VAULT_TOKEN'))
    await settle()
    expect(changes).toHaveLength(1) // needs-auth: nothing visible changed, nothing sent

    await connected(dir, 'vault', { env: { VAULT_TOKEN: 'vault-secret-1' } })
    await eventually(
      () => changes.length,
      (n) => n >= 2,
    )
    await settle()
    expect(changes).toHaveLength(2)
    expect(await names()).toContain('vault_search_nodes')

    await tuttiJson(dir, ['connector', 'disconnect', 'vault'])
    await eventually(
      () => changes.length,
      (n) => n >= 3,
    )
    await settle()
    expect(changes).toHaveLength(3)
    expect(await names()).not.toContain('vault_search_nodes')

    await uninstalled(dir, 'vault')
    await settle()
    expect(changes).toHaveLength(3) // already inactive

    await uninstalled(dir, 'memory')
    await eventually(
      () => changes.length,
      (n) => n >= 4,
    )
    await settle()
    expect(changes).toHaveLength(4)
    expect(await names()).not.toContain('memory_read_graph')
    for (const c of changes)
      expect(c).toMatchObject({ _meta: { 'io.modelcontextprotocol/subscriptionId': expect.anything() } })
    await sub.close()
    await client.close()
  })

  it(
    'a call through the server reaches the real memory server ' + 'and its data persists in the connector data dir',
    async () => {
      await installed(dir, memoryConnector('graph'))
      const client: Client = await modernClient(binding)
      await client.callTool({
        name: 'graph_create_entities',
        arguments: { entities: [{ name: 'tutti', entityType: 'project', observations: ['routes connectors'] }] },
      })
      const found = await client.callTool({ name: 'graph_search_nodes', arguments: { query: 'tutti' } })
      expect(JSON.stringify(found)).toContain('routes connectors')
      await client.close()
    },
  )
})
