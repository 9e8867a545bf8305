import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { memoryConnector, probeConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { legacyPost, MODERN_META, modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { MEMORY_TOOLS } from '../support/model-sees.js'
import { cleanupState, connectorState, isAlive, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

// Tool filters per connector (issue 23), with a real daemon and the npm memory server (9 tools):
// `connect --tools/--hide-tools/--all-tools/--always-load`, the manifest's default filter, and a
// Codex config's enabled_tools. What a filter hides is not listed and is an unknown tool on every
// serving path; changing it neither restarts the upstream nor costs its tool cache.

const ALL = MEMORY_TOOLS
/** A legal extra `_meta` key: the same request, but not exactly plain, so the SDK path serves it. */
const SDK_META = { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' }
const ALWAYS = { 'anthropic/alwaysLoad': true }

describe('tool filters per connector', () => {
  let dir: string
  let binding: Binding
  let client: Client
  let listChanged = 0
  const installedJson = () => fs.readFileSync(path.join(dir, 'installed.json'))
  const stored = (key: string) => JSON.parse(installedJson().toString('utf8')).connectors[key].toolFilter
  const connect = (key: string, ...flags: string[]) => tutti(dir, ['connector', 'connect', key, ...flags])

  /**
   * tools/list of `key`'s tools on the fast path and the SDK's, in both eras: each era's two answers must be the
   * same bytes; returns the tools as listed.
   */
  async function listed(key: string): Promise<Array<{ name: string; _meta?: unknown }>> {
    const fast = await modernPost(binding, 'tools/list')
    const sdk = await modernPost(binding, 'tools/list', { _meta: SDK_META })
    expect(fast.text).toBe(sdk.text)
    const legacy = { id: 4, method: 'tools/list' }
    const legacyFast = await legacyPost(binding, legacy, { 'mcp-protocol-version': '2025-06-18' })
    const legacySdk = await legacyPost(binding, legacy)
    expect(legacyFast.text).toBe(legacySdk.text)
    expect(legacyFast.json.result.tools).toEqual(fast.json.result.tools)
    return (fast.json.result.tools as Array<{ name: string }>).filter((t) => t.name.startsWith(`${key}_`))
  }
  const names = async (key: string) => (await listed(key)).map((t) => t.name)

  /** The JSON-RPC error code of a tools/call on each path and era (undefined: answered). */
  async function codes(name: string): Promise<unknown[]> {
    const legacy = { id: 5, method: 'tools/call', params: { name, arguments: {} } }
    const answers = [
      await modernPost(binding, 'tools/call', { name, arguments: {} }),
      await modernPost(binding, 'tools/call', { name, arguments: {}, _meta: SDK_META }),
      await legacyPost(binding, legacy, { 'mcp-protocol-version': '2025-06-18' }),
      await legacyPost(binding, legacy),
    ]
    return answers.map((a) => a.json.error?.code)
  }

  async function session(name: string): Promise<void> {
    await client?.close()
    binding = (await prepared(dir, { session: name })).mcpServers[0]!
    client = await modernClient(binding)
    client.setNotificationHandler('notifications/tools/list_changed', () => void listChanged++)
    await client.listen({ toolsListChanged: true })
  }

  beforeAll(async () => {
    dir = tempStateDir('tool-filters')
    await installed(dir, memoryConnector('mem'))
    await session('filters')
  })
  afterAll(async () => {
    await client?.close()
    await cleanupState(dir)
  })

  it('--tools: only those are served, on every path; the running upstream and its tool cache stay', async () => {
    expect(await names('mem')).toEqual(ALL.map((t) => `mem_${t}`))
    // the upstream runs (a call started it), and its whole table is cached
    expect((await client.callTool({ name: 'mem_read_graph', arguments: {} })).isError).toBeFalsy()
    const running = await connectorState(dir, 'mem')
    expect(running).toMatchObject({ upstream: 'running', starts: 1 })
    const cache = fs.readFileSync(path.join(dir, 'tool-cache', 'mem.json'))
    const heard = listChanged

    const res = await connect('mem', '--tools', 'create_entities,mem_read_graph', '--json')
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({
      tools: { changed: true, checkedAgainst: 'served', toolFilter: { allow: ['create_entities', 'read_graph'] } },
      state: { status: 'ready', tools: 2, hiddenTools: 7 },
    })
    // stored by upstream names
    expect(stored('mem')).toEqual({ allow: ['create_entities', 'read_graph'] })
    expect(await until(() => listChanged > heard)).toBe(true)
    expect(await names('mem')).toEqual(['mem_create_entities', 'mem_read_graph'])
    expect(await codes('mem_search_nodes')).toEqual([-32602, -32602, -32602, -32602])
    expect(await codes('mem_read_graph')).toEqual([undefined, undefined, undefined, undefined])
    // the same process serves on: a filter is a new generation, not a restart or a cache miss
    expect(await connectorState(dir, 'mem')).toMatchObject({ pid: running.pid, starts: 1, upstream: 'running' })
    expect(isAlive(running.pid)).toBe(true)
    expect(fs.readFileSync(path.join(dir, 'tool-cache', 'mem.json'))).toEqual(cache)
    expect(JSON.parse(cache.toString('utf8')).tools).toHaveLength(ALL.length)
  })

  it('available counts the hidden tools; status shows the filter and who set it', async () => {
    const available = await tuttiJson(dir, ['connector', 'available'])
    const mcp = available.connectors[0].interfaces.find((i: { kind: string }) => i.kind === 'mcp')
    expect(mcp).toMatchObject({ tools: 2, hiddenTools: 7 })
    expect((await tutti(dir, ['connector', 'available'])).stdout).toMatch(/2 tools \(7 hidden\), /)
    expect(await connectorState(dir, 'mem')).toMatchObject({
      tools: 2,
      hiddenTools: 7,
      toolFilter: { allow: ['create_entities', 'read_graph'], from: { tools: 'user' } },
    })
    expect((await tutti(dir, ['daemon', 'status'])).stdout).toMatch(
      /2 tools \(7 hidden\)[\s\S]*tools: only create_entities, read_graph \(connect\)/,
    )
  })

  it('--hide-tools: every tool but those; it persists, and a daemon start serves it from the cache', async () => {
    const res = await connect('mem', '--hide-tools', 'delete_entities,mem_delete_relations', '--json')
    expect(res.code, res.stderr).toBe(0)
    expect(stored('mem')).toEqual({ hide: ['delete_entities', 'delete_relations'] })
    const shown = ALL.filter((t) => t !== 'delete_entities' && t !== 'delete_relations').map((t) => `mem_${t}`)
    expect(await names('mem')).toEqual(shown)
    expect(await codes('mem_delete_relations')).toEqual([-32602, -32602, -32602, -32602])
    await tuttiJson(dir, ['daemon', 'stop'])
    const started = await tuttiJson(dir, ['daemon', 'start'])
    // published from the tool cache, with no process: the filter did not change what the cache is keyed by
    expect(started.connectors[0]).toMatchObject({ upstream: 'stopped', starts: 0, tools: 7, hiddenTools: 2 })
    await session('after-restart')
    expect(await names('mem')).toEqual(shown)
  })

  it('bad input exits 2 naming what is wrong, and installed.json stays byte for byte', async () => {
    const before = installedJson()
    const cases: Array<[string[], RegExp]> = [
      [
        ['--tools', 'create_entity'],
        /--tools: connector "mem" has no tool "create_entity"; did you mean "create_entities"\?/,
      ],
      [['--hide-tools', 'zzzzzzzzzzzz'], /has no tool "zzzzzzzzzzzz"; its tools: add_observations, create_entities,/],
      [['--always-load', 'read_graph,nope'], /--always-load: connector "mem" has no tool "nope"/],
      [['--tools', 'read_graph', '--hide-tools', 'open_nodes'], /--tools and --hide-tools exclude each other/],
      [['--tools', 'read_graph', '--all-tools'], /--all-tools serves every tool: it cannot go with --tools/],
      [['--tools', ''], /--tools needs at least one tool name/],
    ]
    for (const [flags, message] of cases) {
      const res = await connect('mem', ...flags)
      expect([res.code, res.stderr], flags.join(' ')).toEqual([2, expect.stringMatching(message)])
    }
    const unknown = await connect('nope', '--tools', 'read_graph')
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringMatching(/connector "nope" is not installed/)])
    expect(installedJson()).toEqual(before)
    await installed(dir, probeConnector('probe'))
    const cliOnly = installedJson()
    const probe = await connect('probe', '--tools', 'anything')
    expect([probe.code, probe.stderr]).toEqual([2, expect.stringMatching(/"probe" has no MCP server: it has no tools/)])
    expect(installedJson()).toEqual(cliOnly)
  })

  it('--all-tools serves every tool; --always-load marks tools with anthropic/alwaysLoad, "" clears', async () => {
    const res = await connect('mem', '--all-tools', '--always-load', 'read_graph,mem_search_nodes', '--json')
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).state.hiddenTools).toBeUndefined()
    expect(stored('mem')).toEqual({ all: true, alwaysLoad: ['read_graph', 'search_nodes'] })
    const tools = await listed('mem')
    expect(tools.map((t) => t.name)).toEqual(ALL.map((t) => `mem_${t}`))
    expect(tools.filter((t) => t._meta).map((t) => [t.name, t._meta])).toEqual([
      ['mem_read_graph', ALWAYS],
      ['mem_search_nodes', ALWAYS],
    ])
    expect((await connect('mem', '--always-load', '')).code).toBe(0)
    expect((await listed('mem')).filter((t) => t._meta)).toEqual([])
    expect(stored('mem')).toEqual({ all: true, alwaysLoad: [] })
  })

  it("the manifest's mcp.tools object is the default filter; connect replaces it, --all-tools clears it", async () => {
    const release = memoryConnector('shown')
    const file = path.join(release, 'tutti-connector.json')
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8'))
    manifest.mcp.tools = {
      hide: ['delete_entities', 'delete_observations', 'delete_relations'],
      alwaysLoad: ['read_graph'],
    }
    fs.writeFileSync(file, JSON.stringify(manifest))
    expect((await installed(dir, release)).state).toMatchObject({ tools: 6, hiddenTools: 3 })
    expect(await connectorState(dir, 'shown')).toMatchObject({
      toolFilter: { hide: ['delete_entities', 'delete_observations', 'delete_relations'], alwaysLoad: ['read_graph'] },
    })
    expect((await connectorState(dir, 'shown')).toolFilter.from).toEqual({ tools: 'manifest', alwaysLoad: 'manifest' })
    const tools = await listed('shown')
    expect(tools.map((t) => t.name)).not.toContain('shown_delete_entities')
    expect(tools.filter((t) => t._meta).map((t) => t.name)).toEqual(['shown_read_graph'])
    // the hidden tools are known by name: the user may allow one the manifest hides
    expect((await connect('shown', '--tools', 'delete_entities')).code).toBe(0)
    expect(await names('shown')).toEqual(['shown_delete_entities'])
    expect((await connect('shown', '--all-tools')).code).toBe(0)
    expect(await names('shown')).toEqual(ALL.map((t) => `shown_${t}`))
  })

  it('names given before any table is known are stored unchecked, with a note; status names a misfit', async () => {
    await installed(dir, memoryConnector('locked', 'LOCKED_KEY'))
    const res = await connect('locked', '--tools', 'read_graph,no_such_tool')
    expect(res.code, res.stderr).toBe(0)
    expect(res.stderr).toMatch(/locked has not listed its tools yet, so the names were stored unchecked/)
    const ready = await connect('locked', '--env', 'LOCKED_KEY=some-value-1234', '--json')
    expect(ready.code, ready.stderr).toBe(0)
    expect(await connectorState(dir, 'locked')).toMatchObject({
      status: 'ready',
      tools: 1,
      hiddenTools: 8,
      toolFilter: { allow: ['read_graph', 'no_such_tool'], unmatched: ['no_such_tool'] },
    })
    // with a table known now, the same name is refused
    expect((await connect('locked', '--tools', 'no_such_tool')).code).toBe(2)
  })

  it("a Codex config's enabled_tools is the imported connector's filter", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-filters-codex-'))
    try {
      const codexHome = path.join(home, 'codex-home')
      fs.mkdirSync(codexHome, { recursive: true })
      const config = ['[mcp_servers.codexmem]', 'command = "mcp-server-memory"']
      config.push('enabled_tools = ["read_graph", "search_nodes", "open_nodes"]', 'disabled_tools = ["open_nodes"]')
      fs.writeFileSync(path.join(codexHome, 'config.toml'), `${config.join('\n')}\n`)
      const env = { HOME: home, CODEX_HOME: codexHome }
      const args = ['connector', 'install', '--from', 'codex', '--project', home, '--json']
      const res = await tutti(dir, args, { env })
      expect(res.code, res.stderr).toBe(0)
      const entry = JSON.parse(res.stdout).entries[0]
      expect(entry).toMatchObject({ key: 'codexmem', outcome: 'installed', state: { tools: 2, hiddenTools: 7 } })
      expect(JSON.stringify(entry)).not.toMatch(/enabled_tools|disabled_tools/)
      expect(await names('codexmem')).toEqual(['codexmem_read_graph', 'codexmem_search_nodes'])
      expect((await connectorState(dir, 'codexmem')).toolFilter).toMatchObject({
        allow: ['read_graph', 'search_nodes'],
        from: { tools: 'manifest' },
      })
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})
