import type { Client } from '@modelcontextprotocol/client'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseManifest, CLI_FILE, makeConnector, skill } from '../support/connector-fixture.js'
import { connected, installed, prepared, uninstalled } from '../support/in-process.js'
import { legacyPost, modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

// Connector Skills over MCP (the SEP-2640 skills extension) with a real
// daemon: what skills/list serves follows install, connect, disconnect and
// uninstall, each change is announced on a listen stream, and the native
// Skill roots of a session are what they were.

const guidesConnector = (version = '1.0.0'): string =>
  makeConnector(
    { ...baseManifest({ key: 'guides', name: 'Guides', version, skills: 'skills' }), cli: undefined },
    {
      'skills/howto/SKILL.md': skill('guides-howto', `How-to ${version}`),
      'skills/howto/references/steps.md': `steps of ${version}\n`,
    },
  )

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`

describe('connector Skills over MCP with a real daemon', () => {
  let dir: string
  let binding: Binding
  let client: Client
  const heard: Array<() => void> = []
  let announcements = 0

  /** Resolves at the next notifications/resources/list_changed on the listen stream. */
  const announced = (): Promise<void> => new Promise((resolve) => heard.push(resolve))

  const listed = async (): Promise<any[]> => {
    const answer = await modernPost(binding, 'skills/list')
    expect(answer.json.error).toBeUndefined()
    expect(answer.json.result.nextCursor).toBeUndefined()
    return answer.json.result.skills
  }
  const read = async (uri: string) => (await modernPost(binding, 'resources/read', { uri }, { 'mcp-name': uri })).json

  beforeAll(async () => {
    dir = tempStateDir('skills-mcp')
    await installed(dir, guidesConnector())
    // a Skill behind a credential, and no MCP server: a server's own resources would be announced on the same list
    const skillOnly = makeConnector(
      {
        ...baseManifest({ key: 'full', name: 'Full full', skills: 'skills' }),
        auth: { kind: 'env', variables: [{ name: 'FULL_KEY', secret: true }] },
      },
      { ...CLI_FILE, 'skills/full-workflow/SKILL.md': skill('full-workflow') },
    )
    await installed(dir, skillOnly)
    binding = (await prepared(dir, { provider: 'tutti-agent', workspace: 'skills', session: 'mcp' })).mcpServers[0]!
    client = await modernClient(binding)
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      announcements++
      for (const resolve of heard.splice(0)) resolve()
    })
    const sub = await client.listen({ resourcesListChanged: true })
    expect(sub.honoredFilter).toMatchObject({ resourcesListChanged: true })
  })
  afterAll(async () => {
    await client?.close()
    await cleanupState(dir)
  })

  it(
    'at start: the active connector’s Skill, with the bytes its digests name; ' +
      'not the one that still needs its credential',
    async () => {
      const skills = await listed()
      expect(skills.map((s) => s.uri)).toEqual(['skill://guides/guides-howto/SKILL.md'])
      for (const r of skills[0].resources) {
        const content = (await read(r.uri)).result.contents[0]
        const bytes = Buffer.from(content.text, 'utf8')
        expect([bytes.length, sha256(bytes)]).toEqual([r.size, r.digest])
      }
      // the 2025 era serves the same entry
      const legacy = await legacyPost(
        binding,
        { id: 1, method: 'skills/list', params: {} },
        { 'mcp-protocol-version': '2025-06-18' },
      )
      expect(legacy.json.result.skills).toEqual(skills)
    },
  )

  it('connect: the Skill comes, announced; the session’s native Skill roots are what they were', async () => {
    const next = announced()
    await connected(dir, 'full', { env: { FULL_KEY: 'secret-value-123' } })
    await next
    expect((await listed()).map((s) => s.uri)).toEqual([
      'skill://full/full-workflow/SKILL.md',
      'skill://guides/guides-howto/SKILL.md',
    ])
    const roots = (await prepared(dir, { provider: 'tutti-agent', workspace: 'skills', session: 'roots' })).skillRoots
    expect(roots.map((r: { connector: string }) => r.connector)).toEqual(['full', 'guides'])
    for (const root of roots)
      expect(
        fs.existsSync(path.join(root.dir, root.connector === 'full' ? 'full-workflow' : 'howto', 'SKILL.md')),
      ).toBe(true)
  })

  it('disconnect: the Skill goes, announced, and its files are no longer served', async () => {
    const uri = 'skill://full/full-workflow/SKILL.md'
    expect((await read(uri)).result.contents[0].text).toContain('name: full-workflow')
    const next = announced()
    await tuttiJson(dir, ['connector', 'disconnect', 'full'])
    await next
    expect((await listed()).map((s) => s.uri)).toEqual(['skill://guides/guides-howto/SKILL.md'])
    expect((await read(uri)).error).toMatchObject({ code: -32602, data: { uri } })
    expect((await modernPost(binding, 'skills/get', { uri })).json.error).toMatchObject({ code: -32602 })
  })

  it('a new release: the entry changes (new digests), announced; uninstall: nothing is listed, announced', async () => {
    const before = (await listed())[0]
    let next = announced()
    await installed(dir, guidesConnector('2.0.0'))
    await next
    const after = (await listed())[0]
    expect(after.frontmatter.description).toBe('How-to 2.0.0')
    expect(after.resources.map((r: { digest: string }) => r.digest)).not.toEqual(
      before.resources.map((r: { digest: string }) => r.digest),
    )
    expect((await read('skill://guides/guides-howto/references/steps.md')).result.contents[0].text).toBe(
      'steps of 2.0.0\n',
    )
    next = announced()
    await uninstalled(dir, 'guides')
    await next
    expect(await listed()).toEqual([])
    expect(announcements).toBe(4)
  })
})
