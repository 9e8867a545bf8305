import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseManifest } from '../../src/runtime/manifest/load.js'
import { declaredToolsOf, manifestToolFilter } from '../../src/runtime/manifest/schema.js'
import { TOOL_META } from '../../src/runtime/mcp-wire.js'
import { toolFilterOf } from '../../src/runtime/reconcile/tool-filter-of.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import type { RouteClient, UpstreamTool } from '../../src/runtime/registry/route.js'
import { resolveToolNames, toolNamesOf, unmatchedNames } from '../../src/runtime/registry/tool-filter.js'
import { entrySource } from '../../src/runtime/sources/client-configs/entry-source.js'
import { PluginServerMapper } from '../../src/runtime/sources/plugin-mcp-config.js'
import { changedFilter, sameFilter } from '../../src/runtime/store/tool-filter-record.js'

const client: RouteClient = { callTool: async () => ({ content: [] }) }
const tool = (name: string, extra: Partial<UpstreamTool> = {}): UpstreamTool => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object' },
  ...extra,
})
const TABLE = ['search', 'get_issue', 'delete_repo', 'gh_whoami'].map((n) => tool(n))

describe('build-route applies the connector filter', () => {
  it('allow: only the named tools are in the route; the rest are kept by both names in `hidden`', () => {
    const route = buildRoute('gh', 1, client, TABLE, { allow: ['search', 'gh_get_issue'] })
    expect(route.tools.map((t) => t.localName)).toEqual(['gh_get_issue', 'gh_search'])
    expect(route.hidden).toEqual([
      { upstreamName: 'delete_repo', localName: 'gh_delete_repo' },
      { upstreamName: 'gh_whoami', localName: 'gh_whoami' },
    ])
  })

  it('hide: every tool but the named ones; names never depend on what is hidden', () => {
    const whole = buildRoute('gh', 1, client, TABLE)
    const hidden = buildRoute('gh', 1, client, TABLE, { hide: ['delete_repo'] })
    expect(hidden.tools.map((t) => t.localName)).toEqual(['gh_get_issue', 'gh_search', 'gh_whoami'])
    const jsonOf = (r: typeof whole) => new Map(r.tools.map((t) => [t.localName, t.json]))
    for (const [name, json] of jsonOf(hidden)) expect(jsonOf(whole).get(name)).toBe(json)
    // what clients see changed, and only the fingerprint of what they see counts
    expect(hidden.fingerprint).not.toBe(whole.fingerprint)
    expect(buildRoute('gh', 2, client, TABLE, { hide: ['gh_delete_repo'] }).fingerprint).toBe(hidden.fingerprint)
  })

  it('a hidden tool is not validated: hiding a broken tool serves the rest', () => {
    const broken = [...TABLE, tool('broken', { inputSchema: { type: 'string' } })]
    expect(() => buildRoute('gh', 1, client, broken)).toThrow(/tool "broken": the root of inputSchema/)
    expect(buildRoute('gh', 1, client, broken, { hide: ['broken'] }).tools).toHaveLength(4)
  })

  it('alwaysLoad: the tool is served with _meta["anthropic/alwaysLoad"], last, and the print changes', () => {
    const plain = buildRoute('gh', 1, client, TABLE)
    const route = buildRoute('gh', 1, client, TABLE, { alwaysLoad: ['search'] })
    const search = route.tools.find((t) => t.upstreamName === 'search')!
    expect(TOOL_META.alwaysLoad).toBe('anthropic/alwaysLoad')
    expect(JSON.parse(search.json)).toEqual({
      name: 'gh_search',
      inputSchema: { type: 'object' },
      description: 'search tool',
      _meta: { 'anthropic/alwaysLoad': true },
    })
    expect(Object.keys(JSON.parse(search.json)).at(-1)).toBe('_meta')
    expect(route.tools.filter((t) => t.alwaysLoad).map((t) => t.localName)).toEqual(['gh_search'])
    expect(route.fingerprint).not.toBe(plain.fingerprint)
  })

  it('names a filter gives that the table lacks are found, by either name', () => {
    const names = toolNamesOf(
      'gh',
      TABLE.map((t) => t.name),
    )
    expect(unmatchedNames({ allow: ['search', 'gh_get_issue', 'gone'], alwaysLoad: ['nope'] }, names)).toEqual([
      'gone',
      'nope',
    ])
  })
})

describe('names a user types', () => {
  const names = toolNamesOf(
    'gh',
    TABLE.map((t) => t.name),
  )
  it('upstream or published names, stored as upstream names', () => {
    expect(resolveToolNames('gh', '--tools', ['gh_search', 'get_issue', 'gh_whoami', 'search'], names)).toEqual([
      'search',
      'get_issue',
      'gh_whoami',
    ])
  })
  it('an unknown one is bad input naming it, with a near match or the tools', () => {
    expect(() => resolveToolNames('gh', '--tools', ['serch'], names)).toThrow(
      /--tools: connector "gh" has no tool "serch"; did you mean "search"\?/,
    )
    const err = (() => {
      try {
        resolveToolNames('gh', '--hide-tools', ['completely-different'], names)
      } catch (e) {
        return e as { exitCode: number; message: string }
      }
    })()
    expect(err?.exitCode).toBe(2)
    expect(err?.message).toMatch(/its tools: delete_repo, get_issue, gh_whoami, search$/)
  })
})

describe('the filter in effect: the user replaces the manifest', () => {
  const manifest = (tools: unknown) =>
    parseManifest(
      JSON.stringify({
        schemaVersion: 1,
        key: 'gh',
        name: 'G',
        version: '1',
        mcp: { transport: 'stdio', command: 'x', tools },
      }),
    )
  const m = manifest({ hide: ['delete_repo'], alwaysLoad: ['search'] })

  it('the manifest default', () => {
    expect(toolFilterOf(m, undefined)).toEqual({
      filter: { hide: ['delete_repo'], alwaysLoad: ['search'] },
      view: { hide: ['delete_repo'], alwaysLoad: ['search'], from: { tools: 'manifest', alwaysLoad: 'manifest' } },
    })
  })
  it("--tools replaces the manifest's allow/hide and keeps its alwaysLoad", () => {
    expect(toolFilterOf(m, { allow: ['get_issue'] }).filter).toEqual({ allow: ['get_issue'], alwaysLoad: ['search'] })
  })
  it('--all-tools clears both; --always-load "" clears the manifest\'s list', () => {
    expect(toolFilterOf(m, { all: true }).filter).toEqual({ alwaysLoad: ['search'] })
    expect(toolFilterOf(m, { all: true, alwaysLoad: [] })).toEqual({
      view: { alwaysLoad: [], from: { tools: 'user', alwaysLoad: 'user' } },
    })
  })
  it('no filter anywhere: none', () => {
    expect(toolFilterOf(manifest([]), undefined)).toEqual({})
  })
  it('a stored filter changes by parts, and an equal one is no change', () => {
    const stored = changedFilter(undefined, { tools: { allow: ['a'] }, alwaysLoad: ['a'] })
    expect(stored).toEqual({ allow: ['a'], alwaysLoad: ['a'] })
    expect(changedFilter(stored, { tools: { hide: ['b'] } })).toEqual({ hide: ['b'], alwaysLoad: ['a'] })
    expect(changedFilter(stored, { tools: { all: true } })).toEqual({ all: true, alwaysLoad: ['a'] })
    expect(sameFilter(stored, { alwaysLoad: ['a'], allow: ['a'] })).toBe(true)
    expect(sameFilter(stored, { allow: ['a'] })).toBe(false)
  })
})

describe('the manifest: mcp.tools as a list or as an object', () => {
  const base = { schemaVersion: 1, key: 'gh', name: 'G', version: '1' }
  const parse = (mcp: Record<string, unknown>) =>
    parseManifest(JSON.stringify({ ...base, mcp: { transport: 'stdio', command: 'x', ...mcp } }))
  const declared = [{ name: 'search', inputSchema: { type: 'object' } }]

  it('the list is the declarations; the object carries them and the default filter', () => {
    expect(declaredToolsOf(parse({ tools: declared }).mcp)).toEqual(declared)
    expect(manifestToolFilter(parse({ tools: declared }).mcp)).toBeUndefined()
    const m = parse({ activation: 'lazy', tools: { declared, allow: ['search'], alwaysLoad: ['search'] } })
    expect(declaredToolsOf(m.mcp)).toEqual(declared)
    expect(manifestToolFilter(m.mcp)).toEqual({ allow: ['search'], alwaysLoad: ['search'] })
  })

  it.each([
    [{ tools: { declared, bogus: 1 } }, /mcp\.tools\.bogus: unknown field/],
    [
      { tools: { declared: [{ name: 'a', inputSchema: { type: 'object' }, x: 1 }] } },
      /mcp\.tools\.declared\[0]\.x: unknown field/,
    ],
    [{ tools: [{ name: 'a', inputSchema: { type: 'string' } }] }, /mcp\.tools\[0]\.inputSchema\.type: the root/],
    [{ tools: { allow: ['a'], hide: ['b'] } }, /mcp\.tools\.hide: "allow" and "hide" exclude each other/],
    [{ tools: { allow: [''] } }, /mcp\.tools\.allow\[0]: must not be empty/],
    [{ tools: 'search' }, /mcp\.tools: must be a list of tool declarations or/],
    [{ activation: 'lazy', tools: { allow: ['a'] } }, /mcp\.tools: lazy activation requires/],
    [{ tools: { declared: [...declared, ...declared] } }, /mcp\.tools\.declared\[1]\.name: duplicate tool name/],
  ])('%j is refused with its path', (mcp, message) => {
    expect(() => parse(mcp)).toThrow(message)
  })
})

describe('imports map the clients’ tool filters onto the manifest', () => {
  const map = (fields: Record<string, unknown>) =>
    new PluginServerMapper().toTutti({ command: 'srv', args: [], env: {}, ...fields } as never, [])

  it('Codex enabled_tools is allow (less disabled_tools); disabled_tools alone is hide; none are skipped', () => {
    expect(map({ enabled_tools: ['a', 'b'], disabled_tools: ['b'] })).toMatchObject({
      mcp: { tools: { allow: ['a'] } },
    })
    const hidden = map({ disabled_tools: ['x'] })
    expect(hidden.mcp.tools).toEqual({ hide: ['x'] })
    expect(hidden.skipped).toEqual([])
    expect(map({}).mcp.tools).toBeUndefined()
  })

  it("Gemini CLI's includeTools / excludeTools are the same filter", async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-gemini-filter-'))
    try {
      const entry = {
        name: 'docs',
        origin: '~/.gemini/settings.json',
        server: { command: 'srv', includeTools: ['read', 'write'], excludeTools: ['write'] },
        inputs: [],
        skipped: [],
      }
      const out = await entrySource(entry, 'Gemini CLI config', { scratchDir: async () => scratch })
      expect((out.generated.manifest.mcp as { tools: unknown }).tools).toEqual({ allow: ['read'] })
      expect(out.generated.skipped).toEqual([])
      expect(parseManifest(JSON.stringify(out.generated.manifest)).mcp?.tools).toEqual({ allow: ['read'] })
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true })
    }
  })
})
