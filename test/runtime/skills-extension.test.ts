import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { HTTPResponse } from 'h3'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { ConnectorMcpEndpoint } from '../../src/runtime/mcpserver/mcp-endpoint.js'
import { SkillCatalogue } from '../../src/runtime/mcpserver/skill-catalogue.js'
import type { SkillRootOf } from '../../src/runtime/reconcile/connector-snapshot.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import { SessionTokens } from '../../src/runtime/sessions/session-tokens.js'
import { legacy, modern, URL_, type Answer, type Harness } from './mcp-endpoint-harness.js'

// The SEP-2640 skills extension on the connector endpoint, in-process: real
// Skill directories on disk, the endpoint's own catalogue fed the roots the
// daemon would give it, requests handed to endpoint.handle.

const EXT = 'io.modelcontextprotocol/skills'
const skillMd = (name: string, description: string, extra = ''): string =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nSee references/GUIDE.md.\n`

let tmp: string
let h: Harness
let catalogue: SkillCatalogue
let logLines: string[]
let roots: { alpha: SkillRootOf; beta: SkillRootOf; bad: SkillRootOf }

function write(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

/** A release of connector `key` with Skills `dirs` (dir name → files), as the daemon's snapshots name it. */
function release(
  key: string,
  skills: Record<string, { name: string; files: Record<string, string | Buffer> }>,
): SkillRootOf {
  const root = path.join(tmp, key, 'releases', 'digest')
  const dir = path.join(root, 'skills')
  for (const [d, s] of Object.entries(skills))
    for (const [rel, content] of Object.entries(s.files)) write(path.join(dir, d, rel), content)
  return {
    connector: key,
    dir,
    releaseRoot: root,
    skills: Object.entries(skills).map(([d, s]) => ({ name: s.name, dir: path.join(dir, d) })),
  }
}

const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0x01])

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-skills-ext-'))
  logLines = []
  const log = createLogger(memorySink(logLines), undefined, 'mcp', 'debug')
  const sessions = new SessionTokens(path.join(tmp, 'sessions.json'), log)
  await sessions.load()
  const token = await sessions.issue('ws', 'main', 'claude')
  catalogue = new SkillCatalogue(log, 1)
  const endpoint = new ConnectorMcpEndpoint(new ConnectorMCPRegistry(), sessions, log, catalogue)
  h = { endpoint, token, sessions } as Harness
  roots = {
    alpha: release('alpha', {
      // the directory's name is not the Skill's: the URI carries the name
      guide: {
        name: 'alpha-guide',
        files: {
          'SKILL.md': skillMd(
            'alpha-guide',
            'Guide to alpha',
            'title: Alpha Guide\nlicense: MIT\nmetadata:\n  version: "2.1"\n  tags: [a, b]\n',
          ),
          'references/GUIDE.md': '\uFEFFa guide with a BOM and ünïcödé\n',
          'templates/regional/eu.md': 'EU\n',
          'assets/logo.png': BINARY,
          'name with space.txt': 'spaced\n',
        },
      },
      other: { name: 'alpha-other', files: { 'SKILL.md': skillMd('alpha-other', 'Another alpha Skill') } },
    }),
    beta: release('beta', {
      'beta-notes': { name: 'beta-notes', files: { 'SKILL.md': skillMd('beta-notes', 'Notes') } },
    }),
    // tutti's own rule lets "bad--name" through; the Agent Skills rules the extension requires do not
    bad: release('bad', { x: { name: 'bad--name', files: { 'SKILL.md': skillMd('bad--name', 'Doubled hyphen') } } }),
  }
  const alphaGuide = path.join(roots.alpha.dir, 'guide')
  // a link out of the Skill (still inside the release) and one inside it
  write(path.join(roots.alpha.releaseRoot, 'secret.txt'), 'not part of the Skill\n')
  fs.symlinkSync(path.join(roots.alpha.releaseRoot, 'secret.txt'), path.join(alphaGuide, 'escape.txt'))
  fs.symlinkSync('references/GUIDE.md', path.join(alphaGuide, 'guide-link.md'))
  fs.symlinkSync('..', path.join(alphaGuide, 'templates', 'up'))
})
afterAll(async () => {
  await h.endpoint.close()
  fs.rmSync(tmp, { recursive: true, force: true })
})
beforeEach(async () => {
  catalogue.update([roots.alpha, roots.beta, roots.bad])
  await catalogue.ready()
})

const result = (a: Answer) => {
  expect(a.json.error, JSON.stringify(a.json.error)).toBeUndefined()
  return a.json.result
}
const call = (
  era: 'modern' | 'legacy',
  method: string,
  params: Record<string, unknown> = {},
  id = 1,
): Promise<Answer> =>
  era === 'modern'
    ? modern(h, method, params, method === 'resources/read' ? { 'mcp-name': String(params.uri) } : {}, id)
    : legacy(h, { id, method, params })

async function listAll(era: 'modern' | 'legacy'): Promise<{ pages: any[]; skills: any[] }> {
  const pages: any[] = []
  let cursor: string | undefined
  do {
    const page = result(await call(era, 'skills/list', cursor ? { cursor } : {}, pages.length + 1))
    pages.push(page)
    cursor = page.nextCursor
  } while (cursor && pages.length < 20)
  return { pages, skills: pages.flatMap((p) => p.skills) }
}

function bytesOf(content: { text?: string; blob?: string }): Buffer {
  return content.text !== undefined ? Buffer.from(content.text, 'utf8') : Buffer.from(content.blob!, 'base64')
}

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`

describe('capability', () => {
  it(
    '2026-07-28: server/discover declares the extension inline (directoryRead) with ' + 'resources.listChanged',
    async () => {
      const caps = result(await call('modern', 'server/discover')).capabilities
      // beside the tasks extension (tasks-extension.ts), which only this era has
      expect(caps.extensions).toEqual({ [EXT]: { directoryRead: true }, 'io.modelcontextprotocol/tasks': {} })
      expect(caps.resources).toEqual({ listChanged: true, subscribe: true })
    },
  )

  it(
    '2025-06-18: initialize declares it too, ' + 'with resources (no listChanged: no listen streams in that era)',
    async () => {
      const init = result(
        await legacy(h, {
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      )
      expect(init.capabilities.extensions).toEqual({ [EXT]: { directoryRead: true } })
      expect(init.capabilities.resources).toEqual({ listChanged: false, subscribe: true })
    },
  )
})

describe.each(['modern', 'legacy'] as const)('skills/list and skills/get (%s)', (era) => {
  it('pages one entry at a time through the cursor; only Skills the extension allows, sorted by URI', async () => {
    const { pages, skills } = await listAll(era)
    expect(skills.map((s) => s.uri)).toEqual([
      'skill://alpha/alpha-guide/SKILL.md',
      'skill://alpha/alpha-other/SKILL.md',
      'skill://beta/beta-notes/SKILL.md',
    ])
    expect(pages.map((p) => p.skills.length)).toEqual([1, 1, 1])
    expect(pages.at(-1).nextCursor).toBeUndefined()
    for (const p of pages) {
      if (era === 'modern') expect(p).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' })
      else expect(p.ttlMs).toBeUndefined()
    }
    expect(logLines.some((l) => l.includes('bad--name') && l.includes('naming rules'))).toBe(true)
  })

  it('a cursor it never handed out is -32602', async () => {
    expect((await call(era, 'skills/list', { cursor: '!!not-ours' })).json.error).toMatchObject({ code: -32602 })
  })

  it(
    'each entry: front matter identical to its SKILL.md, every file once with the digest and size of the bytes ' +
      'resources/read returns',
    async () => {
      for (const skill of (await listAll(era)).skills) {
        const resources = skill.resources as Array<{ uri: string; digest: string; size: number }>
        expect(resources.map((r) => r.uri)).toContain(skill.uri)
        expect(new Set(resources.map((r) => r.uri)).size).toBe(resources.length)
        for (const r of resources) {
          expect(r.uri.startsWith(skill.uri.slice(0, -'SKILL.md'.length))).toBe(true)
          const read = result(await call(era, 'resources/read', { uri: r.uri }))
          expect(read.contents).toHaveLength(1)
          expect(read.contents[0].uri).toBe(r.uri)
          const bytes = bytesOf(read.contents[0])
          expect([bytes.length, sha256(bytes)]).toEqual([r.size, r.digest])
        }
        const md = result(await call(era, 'resources/read', { uri: skill.uri })).contents[0]
        expect(md.mimeType).toBe('text/markdown')
        expect(skill.frontmatter).toEqual(parseYaml(/^---\n([\s\S]*?)\n---/.exec(md.text)![1]!))
      }
    },
  )

  it(
    'alpha-guide: links inside are files of the Skill, links out and to directories are not; ' +
      'the BOM and the binary survive',
    async () => {
      const guide = (await listAll(era)).skills[0]
      const base = 'skill://alpha/alpha-guide/'
      expect(guide.resources.map((r: { uri: string }) => r.uri.slice(base.length)).sort()).toEqual(
        [
          'SKILL.md',
          'assets/logo.png',
          'guide-link.md',
          'name%20with%20space.txt',
          'references/GUIDE.md',
          'templates/regional/eu.md',
        ].sort(),
      )
      expect(guide.frontmatter).toEqual({
        name: 'alpha-guide',
        description: 'Guide to alpha',
        title: 'Alpha Guide',
        license: 'MIT',
        metadata: { version: '2.1', tags: ['a', 'b'] },
      })
      const guideMd = result(await call(era, 'resources/read', { uri: `${base}references/GUIDE.md` })).contents[0]
      expect(guideMd.text.startsWith('\uFEFF')).toBe(true)
      const logo = result(await call(era, 'resources/read', { uri: `${base}assets/logo.png` })).contents[0]
      expect([logo.mimeType, Buffer.from(logo.blob, 'base64')]).toEqual(['image/png', BINARY])
    },
  )

  it('skills/get answers each listed URI with the listed entry and no cursor; any other URI is -32602', async () => {
    for (const skill of (await listAll(era)).skills) {
      const got = result(await call(era, 'skills/get', { uri: skill.uri }))
      expect(got.skill).toEqual(skill)
      expect(got.nextCursor).toBeUndefined()
      if (era === 'modern') expect(got).toMatchObject({ ttlMs: 0, cacheScope: 'private' })
    }
    for (const uri of [
      'skill://alpha/alpha-nope/SKILL.md',
      'skill://bad/bad--name/SKILL.md',
      'skill://alpha/alpha-guide/references/GUIDE.md',
      'file:///etc/passwd',
    ]) {
      expect((await call(era, 'skills/get', { uri })).json.error, uri).toMatchObject({ code: -32602 })
    }
  })

  it('resources/read refuses what is outside a served Skill: .., escapes, links out, unlisted Skills', async () => {
    for (const uri of [
      'skill://alpha/alpha-guide/escape.txt',
      'skill://alpha/alpha-guide/../alpha-other/SKILL.md',
      'skill://alpha/alpha-guide/%2e%2e/alpha-other/SKILL.md',
      'skill://alpha/alpha-guide/references%2fGUIDE.md',
      'skill://alpha/alpha-guide/templates/up/SKILL.md',
      'skill://alpha/alpha-guide/',
      'skill://bad/bad--name/SKILL.md',
      'skill://alpha/alpha-guide/%E0%A4%A',
    ]) {
      expect((await call(era, 'resources/read', { uri })).json.error, uri).toMatchObject({
        code: -32602,
        data: { uri },
      })
    }
    // another spelling of a served URI is that URI
    expect(
      result(await call(era, 'resources/read', { uri: 'skill://alpha/alpha-guide/name%20with%20sp%61ce.txt' }))
        .contents[0].text,
    ).toBe('spaced\n')
  })

  it('resources/list pages the SKILL.md of each Skill, named and described by its front matter', async () => {
    const listed: any[] = []
    let cursor: string | undefined
    do {
      const page = result(await call(era, 'resources/list', cursor ? { cursor } : {}))
      listed.push(...page.resources)
      cursor = page.nextCursor
    } while (cursor)
    expect(listed.map((r) => r.uri)).toEqual((await listAll(era)).skills.map((s) => s.uri))
    expect(listed[0]).toMatchObject({
      name: 'alpha-guide',
      title: 'Alpha Guide',
      description: 'Guide to alpha',
      mimeType: 'text/markdown',
    })
  })

  it(
    'resources/directory/read: direct children, ' + 'subdirectories as inode/directory, paged; a file is -32602',
    async () => {
      const children: any[] = []
      let cursor: string | undefined
      do {
        const page = result(
          await call(era, 'resources/directory/read', {
            uri: 'skill://alpha/alpha-guide',
            ...(cursor ? { cursor } : {}),
          }),
        )
        children.push(...page.resources)
        cursor = page.nextCursor
      } while (cursor)
      expect(children.map((c) => [c.name, c.mimeType])).toEqual([
        ['SKILL.md', 'text/markdown'],
        ['assets', 'inode/directory'],
        ['guide-link.md', 'text/markdown'],
        ['name with space.txt', 'text/plain'],
        ['references', 'inode/directory'],
        ['templates', 'inode/directory'],
      ])
      const templates = result(
        await call(era, 'resources/directory/read', { uri: 'skill://alpha/alpha-guide/templates/regional' }),
      ).resources
      expect(templates).toEqual([
        {
          uri: 'skill://alpha/alpha-guide/templates/regional/eu.md',
          name: 'eu.md',
          mimeType: 'text/markdown',
          size: 3,
        },
      ])
      for (const uri of [
        'skill://alpha/alpha-guide/SKILL.md',
        'skill://alpha/nope',
        'skill://alpha/alpha-guide/templates/up',
      ]) {
        expect((await call(era, 'resources/directory/read', { uri })).json.error, uri).toMatchObject({ code: -32602 })
      }
    },
  )
})

describe('limits', () => {
  it('a Skill over the extension’s 512 files is not served (others are), with the reason in the log', async () => {
    const files: Record<string, string> = { 'SKILL.md': skillMd('big-many', 'Many files') }
    for (let i = 0; i < 512; i++) files[`refs/f${i}.md`] = `${i}\n`
    const big = release('big', { many: { name: 'big-many', files } })
    catalogue.update([roots.alpha, big])
    await catalogue.ready()
    expect((await listAll('modern')).skills.map((s) => s.uri)).toEqual([
      'skill://alpha/alpha-guide/SKILL.md',
      'skill://alpha/alpha-other/SKILL.md',
    ])
    expect(logLines.some((l) => l.includes('big-many') && l.includes('512 files'))).toBe(true)
  })
})

describe('changes', () => {
  function inProcessFetch(token: string) {
    return async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const req = new Request(url, init)
      req.headers.set('authorization', `Bearer ${token}`)
      const res = await h.endpoint.handle(req)
      return res instanceof HTTPResponse
        ? new Response(res.body ?? null, { status: res.status ?? 200, headers: res.headers })
        : res
    }
  }

  it(
    'a deactivated connector’s Skills go at once, ' +
      'a listen stream hears resources/list_changed, and they come back',
    async () => {
      const c = new Client(
        { name: 'skills-listener', version: '1' },
        { versionNegotiation: { mode: { pin: '2026-07-28' as const } } },
      )
      await c.connect(new StreamableHTTPClientTransport(new URL(URL_), { fetch: inProcessFetch(h.token) }))
      let heard: () => void = () => {}
      let count = 0
      c.setNotificationHandler('notifications/resources/list_changed', () => {
        count++
        heard()
      })
      const next = () => new Promise<void>((resolve) => (heard = resolve))
      const sub = await c.listen({ resourcesListChanged: true })
      expect(sub.honoredFilter).toMatchObject({ resourcesListChanged: true })

      let seen = next()
      // alpha disconnected: the daemon's roots no longer name it
      catalogue.update([roots.beta, roots.bad])
      expect((await listAll('modern')).skills.map((s) => s.uri)).toEqual(['skill://beta/beta-notes/SKILL.md'])
      expect(
        (await call('modern', 'resources/read', { uri: 'skill://alpha/alpha-guide/SKILL.md' })).json.error,
      ).toMatchObject({ code: -32602 })
      expect(
        (await call('modern', 'skills/get', { uri: 'skill://alpha/alpha-guide/SKILL.md' })).json.error,
      ).toMatchObject({ code: -32602 })
      await seen

      // the same roots again: nothing changed, nothing is sent; the next real change proves it (one stream, in order)
      catalogue.update([roots.beta, roots.bad])
      seen = next()
      catalogue.update([roots.alpha, roots.beta, roots.bad])
      await seen
      expect(count).toBe(2)
      expect((await listAll('modern')).skills).toHaveLength(3)
      await sub.close()
      await c.close()
    },
  )
})
