import type { Client } from '@modelcontextprotocol/client'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bridgeClient } from '../support/bridge-clients.js'
import { eventually } from '../support/eventually.js'
import { fullConnector } from '../support/fixture-connector.js'
import { installed, prepared, uninstalled } from '../support/in-process.js'
import {
  legacyClient,
  legacyPost,
  MODERN_META,
  modernClient,
  modernPost,
  type Binding,
} from '../support/mcp-clients.js'
import { cleanupState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

/**
 * Each session sees what it needs (issue 23): a view given by `--connectors` /
 * `--hide-connectors`, by the workspace's `.tutti/connectors.json`, or by the
 * session it was prepared in, carried by the session's token. Everything the
 * session reaches follows it: tools/list and tools/call on both serving paths
 * and in both eras, skills/list and the Skill roots, the commands on its PATH,
 * `connector available` run inside it, and which list_changed it is told of.
 */
describe('per-session views', () => {
  let dir: string
  let workspace: string
  const clients: Client[] = []
  beforeAll(async () => {
    dir = tempStateDir('views')
    workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-views-ws-')))
    await installed(dir, fullConnector('alpha'))
    await installed(dir, fullConnector('beta'))
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    await cleanupState(dir)
    fs.rmSync(workspace, { recursive: true, force: true })
  })
  const keep = <T extends Client>(c: T): T => {
    clients.push(c)
    return c
  }
  const toolNames = async (binding: Binding, era: 'modern' | 'legacy') => {
    const client = keep(era === 'modern' ? await modernClient(binding) : await legacyClient(binding))
    return (await client.listTools()).tools.map((t) => t.name).sort()
  }
  const prefixes = (names: string[]) => [...new Set(names.map((n) => n.split('_')[0]))].sort()
  const sdkMeta = { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' }

  it('--connectors alpha: only alpha_* is listed and callable, on both paths, both eras; others see all', async () => {
    const narrow = await prepared(dir, { session: 'only-alpha', connectors: ['alpha'] })
    const whole = await prepared(dir, { session: 'whole' })
    const binding = narrow.mcpServers[0]!
    expect(prefixes(await toolNames(binding, 'modern'))).toEqual(['alpha'])
    expect(prefixes(await toolNames(binding, 'legacy'))).toEqual(['alpha'])
    expect(prefixes(await toolNames(whole.mcpServers[0]!, 'modern'))).toEqual(['alpha', 'beta'])

    // the fast path (exactly right) and the SDK path (an extra _meta key) both call alpha and refuse beta
    const read = (name: string, meta?: object) =>
      modernPost(binding, 'tools/call', { name, arguments: {}, ...(meta ? { _meta: meta } : {}) })
    expect((await read('alpha_read_graph')).json.result.isError).not.toBe(true)
    for (const meta of [undefined, sdkMeta]) {
      const refused = await read('beta_read_graph', meta)
      expect(refused.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('beta_read_graph') })
    }
    for (const headers of [{ 'mcp-protocol-version': '2025-06-18' }, {} as Record<string, string>]) {
      const body = { id: 3, method: 'tools/call', params: { name: 'beta_read_graph', arguments: {} } }
      expect((await legacyPost(binding, body, headers)).json.error).toMatchObject({ code: -32602 })
    }
    // the whole session still calls beta
    const other = await modernPost(whole.mcpServers[0]!, 'tools/call', { name: 'beta_read_graph', arguments: {} })
    expect(other.json.result.isError).not.toBe(true)
  })

  it("the view decides the Skills (skills/list, Skill roots), the PATH's commands and the instructions", async () => {
    const narrow = await prepared(dir, { provider: 'claude', session: 'skills-alpha', connectors: ['alpha'] })
    expect(narrow.skillRoots.map((r) => r.connector)).toEqual(['alpha'])
    expect(narrow.view).toEqual({ narrowed: true, sources: ['--connectors'], connectors: ['alpha'] })
    expect(narrow.context.tools).toBe(9)
    const claudeSkills = path.join(
      narrow.projection.kind === 'claude' ? narrow.projection.addDir : '',
      '.claude/skills',
    )
    expect(fs.readdirSync(claudeSkills)).toEqual(['alpha-workflow'])

    const skills = await modernPost(narrow.mcpServers[0]!, 'skills/list')
    expect(skills.json.result.skills.map((s: { uri: string }) => s.uri)).toEqual([
      'skill://alpha/alpha-workflow/SKILL.md',
    ])
    const client = keep(await modernClient(narrow.mcpServers[0]!))
    await expect(client.readResource({ uri: 'skill://beta/beta-workflow/SKILL.md' })).rejects.toThrow(/not found/)
    const instructions = client.getInstructions() ?? ''
    expect(instructions).toContain('- alpha (Full alpha)')
    expect(instructions).not.toContain('- beta')

    // PATH: the session's own bin first, with alpha's shim and tutti; neither beta's shim nor the state bin dir
    const [first, ...rest] = narrow.env.PATH!.split(path.delimiter)
    expect(fs.readdirSync(first!).sort()).toEqual(['tutti', 'tutti-connector-alpha'])
    expect(rest).not.toContain(path.join(dir, 'bin'))
    expect(fs.existsSync(path.join(dir, 'bin', 'tutti-connector-beta'))).toBe(true)
  })

  it('`connector available` inside the session shows its view and what it costs; outside, everything', async () => {
    const narrow = await prepared(dir, { session: 'available-alpha', hideConnectors: ['beta'] })
    const inside = await tuttiJson(dir, ['connector', 'available'], { env: narrow.env })
    expect(inside.connectors.map((c: { key: string }) => c.key)).toEqual(['alpha'])
    expect(inside.session).toEqual({
      narrowed: true,
      context: { tools: 9, bytes: expect.any(Number), tokens: expect.any(Number) },
    })
    const table = await tutti(dir, ['connector', 'available'], { env: narrow.env })
    expect(table.stdout).toMatch(/this session sees 9 tools, .* narrowed by its view/)
    const status = await tuttiJson(dir, ['daemon', 'status'])
    const entry = status.sessionActivity.find((s: { session: string }) => s.session === 'available-alpha')
    expect(entry).toMatchObject({
      view: ['--hide-connectors'],
      context: { tools: 9, bytes: inside.session.context.bytes },
    })
    const outside = await tuttiJson(dir, ['connector', 'available'])
    expect(outside.connectors.map((c: { key: string }) => c.key)).toEqual(['alpha', 'beta'])
    expect(outside.session).toBeUndefined()
  })

  it('a project file narrows every session of its workspace; a nested session narrows, never widens', async () => {
    const file = path.join(workspace, '.tutti', 'connectors.json')
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(
      file,
      JSON.stringify({ connectors: ['alpha', 'beta'], tools: { alpha: { allow: ['read_graph'] } } }),
    )
    try {
      const project = await prepared(dir, { workspace, session: 'project' })
      expect(await toolNames(project.mcpServers[0]!, 'modern')).toEqual([
        'alpha_read_graph',
        ...['add_observations', 'create_entities', 'create_relations', 'delete_entities'].map((t) => `beta_${t}`),
        ...['delete_observations', 'delete_relations', 'open_nodes', 'read_graph', 'search_nodes'].map(
          (t) => `beta_${t}`,
        ),
      ])
      expect(project.view.sources).toEqual([`project file ${file}`])

      // inside it (its token in the environment), asking for more gets no more: beta only, as the parent has it
      const parentToken = project.env.TUTTI_CONNECTOR_TOKEN!
      const child = await prepared(dir, {
        session: 'child',
        connectors: ['beta', 'alpha'],
        hideConnectors: ['alpha'],
        parentToken,
      })
      expect(prefixes(await toolNames(child.mcpServers[0]!, 'legacy'))).toEqual(['beta'])
      expect(child.env.TUTTI_CONNECTOR_TOKEN).not.toBe(parentToken)
      const widen = await prepared(dir, { workspace: '/elsewhere', session: 'widen', parentToken })
      expect(await toolNames(widen.mcpServers[0]!, 'modern')).toContain('alpha_read_graph')
      expect(await toolNames(widen.mcpServers[0]!, 'modern')).not.toContain('alpha_open_nodes')
    } finally {
      fs.rmSync(path.join(workspace, '.tutti'), { recursive: true, force: true })
    }
  })

  it("session exec inside a session: the sub-agent has its own token and its parent's view, narrowed", async () => {
    // the agents are shells: each runs `tutti` from its PATH; the outer one starts the inner one with exec
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-views-exec-'))
    try {
      const agent = (name: string) =>
        `echo "$TUTTI_CONNECTOR_TOKEN" > "$OUT/${name}.token"; tutti connector available --json > "$OUT/${name}.json"`
      const inner = `tutti session exec --provider codex --connectors alpha,beta -- sh -c '${agent('inner')}'`
      const args = ['session', 'exec', '--provider', 'codex', '--connectors', 'alpha', '--']
      const run = await tutti(dir, [...args, 'sh', '-c', `${agent('outer')}; ${inner}`], { env: { OUT: out } })
      expect(run.code, run.stderr).toBe(0)
      const read = (file: string) => fs.readFileSync(path.join(out, file), 'utf8')
      const keys = (file: string) => JSON.parse(read(file)).connectors.map((c: { key: string }) => c.key)
      expect(keys('outer.json')).toEqual(['alpha'])
      expect(keys('inner.json')).toEqual(['alpha'])
      expect(read('outer.token')).toMatch(/^tutti_/)
      expect(read('inner.token')).toMatch(/^tutti_/)
      expect(read('inner.token')).not.toBe(read('outer.token'))
    } finally {
      fs.rmSync(out, { recursive: true, force: true })
    }
  })

  it('bad input exits 2 naming what is wrong, and changes nothing on disk', async () => {
    const before = snapshotTree(dir)
    const args = ['session', 'prepare', '--provider', 'codex', '--workspace', workspace, '--session', 'bad']
    const unknown = await tutti(dir, [...args, '--connectors', 'alpha,nope', '--json'])
    expect(unknown.code).toBe(2)
    expect(JSON.parse(unknown.stdout).error.message).toMatch(/--connectors: connector "nope" is not installed/)

    const file = path.join(workspace, '.tutti', 'connectors.json')
    fs.mkdirSync(path.dirname(file), { recursive: true })
    try {
      fs.writeFileSync(file, JSON.stringify({ tools: { alpha: { allow: ['no_such_tool'] } } }))
      const tool = await tutti(dir, [...args, '--json'])
      expect(tool.code).toBe(2)
      expect(tool.stdout).toContain(`project file ${file}: \\"no_such_tool\\" is not a tool of connector \\"alpha\\"`)
      fs.writeFileSync(file, '{"connectors": "alpha"}')
      const shape = await tutti(dir, [...args, '--json'])
      expect(shape.code).toBe(2)
      expect(shape.stdout).toContain(`project file ${file}: connectors:`)
      const exec = await tutti(dir, ['session', 'exec', '--provider', 'codex', '--connectors', 'nope', '--', 'true'])
      expect(exec.code).toBe(2)
      expect(exec.stderr).toMatch(/connector "nope" is not installed/)
      const stale = await tutti(dir, ['connector', 'available'], {
        env: { TUTTI_CONNECTOR_TOKEN: `tutti_${'x'.repeat(43)}` },
      })
      expect(stale.code).toBe(2)
      expect(stale.stderr).toMatch(/TUTTI_CONNECTOR_TOKEN is not a live session token/)
    } finally {
      fs.rmSync(path.join(workspace, '.tutti'), { recursive: true, force: true })
    }
    const after = snapshotTree(dir)
    for (const file of ['installed.json', 'credentials.json', 'sessions.json'])
      expect(after[file], file).toBe(before[file])
  })

  it('list_changed reaches a stream only when its own view changed; its PATH follows what it sees', async () => {
    await installed(dir, fullConnector('gamma'))
    const narrow = await prepared(dir, { session: 'watch-alpha', connectors: ['alpha', 'gamma'] })
    const whole = await prepared(dir, { session: 'watch-all' })
    const seen = { narrow: 0, whole: 0 }
    for (const [name, runtime] of [
      ['narrow', narrow],
      ['whole', whole],
    ] as const) {
      const client = keep(await modernClient(runtime.mcpServers[0]!))
      client.setNotificationHandler('notifications/tools/list_changed', () => void seen[name]++)
      await client.listen({ toolsListChanged: true })
    }
    const bin = narrow.env.PATH!.split(path.delimiter)[0]!
    expect(fs.readdirSync(bin).sort()).toEqual(['tutti', 'tutti-connector-alpha', 'tutti-connector-gamma'])
    // delta is outside the narrow view: only the whole session is told
    await installed(dir, fullConnector('delta'))
    await eventually(
      () => seen.whole,
      (n) => n >= 1,
    )
    // gamma goes: both are told. The narrow stream's first notice can only be this one: delta's was published first
    await uninstalled(dir, 'gamma')
    await eventually(
      () => seen.narrow,
      (n) => n >= 1,
    )
    await eventually(
      () => seen.whole,
      (n) => n >= 2,
    )
    expect(seen.narrow).toBe(1)
    await eventually(
      () => fs.readdirSync(bin).sort(),
      (names) => !names.includes('tutti-connector-gamma'),
    )
    // and comes back: so does its command on the narrow session's PATH
    await installed(dir, fullConnector('gamma'))
    await eventually(
      () => fs.readdirSync(bin).sort(),
      (names) => names.includes('tutti-connector-gamma'),
    )
    await eventually(
      () => seen.narrow,
      (n) => n >= 2,
    )
    await uninstalled(dir, 'delta')
    await uninstalled(dir, 'gamma')
  })

  it('session bridge --connectors: a static client config sees only that connector', async () => {
    const { client } = await bridgeClient(dir, 'legacy', { args: ['--connectors', 'beta'] })
    try {
      expect(prefixes((await client.listTools()).tools.map((t) => t.name))).toEqual(['beta'])
    } finally {
      await client.close()
    }
    const refused = await tutti(dir, ['session', 'bridge', '--connectors', 'nope'], { input: '' })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/connector "nope" is not installed/)
  })
})
