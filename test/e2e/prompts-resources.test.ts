import type { Client } from '@modelcontextprotocol/client'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { makeConnector } from '../support/connector-fixture.js'
import { fullConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared, uninstalled } from '../support/in-process.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, EXAMPLES, tempStateDir } from '../support/tutti.js'

/**
 * The whole surface of the real `@modelcontextprotocol/server-everything`
 * through one endpoint (issue 24 items 1-3): its prompts as
 * `everything_<prompt>`, its resources and templates with the connector's
 * key in their URIs, reads, completions, and the notices a session gets,
 * in both protocol eras.
 */
const DOC = 'demo://everything/resource/static/document/features.md'
const PROMPTS = ['args-prompt', 'completable-prompt', 'resource-prompt', 'simple-prompt'].map((p) => `everything_${p}`)

/** A second connector around server-everything, under another key: prompts and resources of its own. */
const otherEverything = (key: string) =>
  makeConnector({
    schemaVersion: 1,
    key,
    name: `Everything ${key}`,
    version: '1.0.0',
    description: 'server-everything again',
    auth: { kind: 'none' },
    mcp: { transport: 'stdio', command: 'mcp-server-everything', args: ['stdio'] },
  })

describe('prompts, resources, templates and completions of a real server', () => {
  let dir: string
  let binding: Binding
  const clients: Client[] = []
  beforeAll(async () => {
    dir = tempStateDir('surface')
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: 'surface-key' } })
    await installed(dir, fullConnector('memo'))
    binding = (await prepared(dir, { session: 'surface' })).mcpServers[0]!
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    await cleanupState(dir)
  })
  const client = async (era: 'modern' | 'legacy', b: Binding = binding): Promise<Client> => {
    const c = era === 'modern' ? await modernClient(b) : await legacyClient(b)
    clients.push(c)
    return c
  }

  describe.each(['modern', 'legacy'] as const)('%s era', (era) => {
    it('prompts: listed as everything_<prompt>, got with arguments, an embedded resource readable back', async () => {
      const c = await client(era)
      expect((await c.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(PROMPTS)
      const args = await c.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Lisbon', state: 'PT' } })
      expect(JSON.stringify(args.messages)).toContain('Lisbon')
      const embedded = await c.getPrompt({
        name: 'everything_resource-prompt',
        arguments: { resourceType: 'Text', resourceId: '3' },
      })
      const resource = embedded.messages.map((m) => m.content).find((c) => c.type === 'resource') as {
        resource: { uri: string; text: string }
      }
      expect(resource.resource.uri).toBe('demo://everything/resource/dynamic/text/3')
      const again = await c.readResource({ uri: resource.resource.uri })
      expect((again.contents[0] as { text: string }).text).toMatch(/^Resource 3:/)
      await expect(c.getPrompt({ name: 'everything_no-such-prompt' })).rejects.toThrow(/unknown prompt/)
    })

    it('resources: the server and Skill files listed with their connector in the URI; templates; reads', async () => {
      const c = await client(era)
      const uris = (await c.listResources()).resources.map((r) => r.uri)
      expect(uris).toContain(DOC)
      expect(uris).toContain('skill://everything/everything-tour/SKILL.md')
      // the npm memory server of `memo` lists its graph as a resource too
      expect(uris.filter((u) => !u.startsWith('demo://everything/') && !u.startsWith('skill://'))).toEqual([
        'memory://memo/knowledge-graph',
      ])
      const templates = (await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort()
      expect(templates).toEqual([
        'demo://everything/resource/dynamic/blob/{resourceId}',
        'demo://everything/resource/dynamic/text/{resourceId}',
      ])
      const doc = await c.readResource({ uri: DOC })
      expect(doc.contents[0]).toMatchObject({ uri: DOC, mimeType: 'text/markdown' })
      const blob = await c.readResource({ uri: 'demo://everything/resource/dynamic/blob/2' })
      expect(blob.contents[0]).toMatchObject({ uri: 'demo://everything/resource/dynamic/blob/2' })
      expect((blob.contents[0] as { blob?: string }).blob).toBeTruthy()
    })

    it('a URI nobody serves is -32602 with the URI in data (SEP-2164), the upstream asked or not', async () => {
      const c = await client(era)
      for (const uri of ['demo://everything/no/such/thing', 'demo://nobody/x', 'test://no-connector']) {
        const err = await c.readResource({ uri }).then(
          () => undefined,
          (e: { code?: number; data?: unknown }) => e,
        )
        expect(err, uri).toMatchObject({ code: -32602, data: { uri } })
      }
    })

    it('completion/complete is routed by its ref to the prompt of the right connector', async () => {
      const c = await client(era)
      const ref = { type: 'ref/prompt' as const, name: 'everything_completable-prompt' }
      const done = await c.complete({ ref, argument: { name: 'department', value: 'Eng' } })
      expect(done.completion.values).toEqual(['Engineering'])
      await expect(
        c.complete({ ref: { type: 'ref/prompt', name: 'memo_nope' }, argument: { name: 'x', value: '' } }),
      ).rejects.toThrow(/unknown prompt/)
    })
  })

  it('a view hides another connector’s prompts and resources as it hides its tools', async () => {
    const narrow = (await prepared(dir, { session: 'surface-memo', connectors: ['memo'] })).mcpServers[0]!
    const c = await client('modern', narrow)
    expect((await c.listPrompts()).prompts).toEqual([])
    expect((await c.listResources()).resources.map((r) => r.uri)).toEqual([
      'memory://memo/knowledge-graph',
      'skill://memo/memo-workflow/SKILL.md',
    ])
    await expect(c.readResource({ uri: DOC })).rejects.toMatchObject({ code: -32602 })
    await expect(c.getPrompt({ name: 'everything_simple-prompt' })).rejects.toThrow(/unknown prompt/)
  })

  it('prompts and resources list_changed: once per real change, and only to streams whose view sees it', async () => {
    const seen = { all: { prompts: 0, resources: 0 }, memo: { prompts: 0, resources: 0 } }
    const narrow = (await prepared(dir, { session: 'surface-watch', connectors: ['memo'] })).mcpServers[0]!
    for (const [name, b] of [
      ['all', binding],
      ['memo', narrow],
    ] as const) {
      const c = await client('modern', b)
      c.setNotificationHandler('notifications/prompts/list_changed', () => void seen[name].prompts++)
      c.setNotificationHandler('notifications/resources/list_changed', () => void seen[name].resources++)
      await c.listen({ promptsListChanged: true, resourcesListChanged: true })
    }
    await installed(dir, otherEverything('ev2'))
    await eventually(
      () => seen.all,
      (s) => s.prompts >= 1 && s.resources >= 1,
    )
    // memo's own change: both streams see it; the narrow one's first notice can only be this one
    await uninstalled(dir, 'memo')
    await eventually(
      () => seen.memo.resources,
      (n) => n >= 1,
    )
    await eventually(
      () => seen.all.resources,
      (n) => n >= 2,
    )
    expect(seen.all.prompts).toBe(1)
    // the uninstall is one change: its resource and its Skill's go in one notice, not the Skill's in a second one
    // after the upstream's drain. A later change's notice comes after any the uninstall still had to give.
    const before = seen.all.resources
    await uninstalled(dir, 'ev2')
    await eventually(
      () => seen.all.resources,
      (n) => n > before,
    )
    expect(seen.memo).toEqual({ prompts: 0, resources: 1 })
  })

  it('a listen stream subscribed to a resource hears of its updates from the upstream, its URI as served', async () => {
    const c = await client('modern')
    const updates: string[] = []
    c.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri))
    await c.listen({ resourceSubscriptions: [DOC] })
    await c.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} })
    try {
      expect(
        await eventually(
          () => updates,
          (u) => u.length > 0,
        ),
      ).toContain(DOC)
      expect(updates.every((u) => u === DOC)).toBe(true)
    } finally {
      await c.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} })
    }
  })
})
