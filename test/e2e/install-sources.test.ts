import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime } from 'tutti'
import { CodexAppServer } from '../support/agents.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { pluginPackage, serverJson } from '../support/package-sources.js'
import { cleanupState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text
const run = (file: string, args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })

/*
 * Connectors from the packages people already have: real npm MCP servers fetched from the registry
 * with the user's npm, a server.json, and Claude Code / Codex / Agent Plugins packages. Nobody writes
 * a manifest; the generated one is written into the release.
 */
describe('install from npm, server.json and plugin packages', () => {
  let dir: string
  let binding: Binding
  const timings: Record<string, number> = {}
  const install = async (label: string, args: string[]) => {
    const started = Date.now()
    // --json before "--": everything after it is the server's
    const dashes = args.indexOf('--')
    const argv = dashes === -1 ? [...args, '--json'] : [...args.slice(0, dashes), '--json', ...args.slice(dashes)]
    const out = await tutti(dir, ['connector', 'install', ...argv])
    timings[label] = Date.now() - started
    expect(out.code, out.stderr || out.stdout).toBe(0)
    return JSON.parse(out.stdout)
  }
  const callBoth = async (tool: string, args: Record<string, unknown>) => {
    const answers: string[] = []
    for (const make of [modernClient, legacyClient]) {
      const client = await make(binding)
      answers.push(text(await client.callTool({ name: tool, arguments: args })))
      await client.close()
    }
    return answers
  }

  beforeAll(async () => {
    dir = tempStateDir('sources')
    binding = (
      await tuttiJson(dir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'sources'])
    ).mcpServers[0]
  })
  afterAll(async () => {
    // the figures the issue asks for: install time of each package (npm fetch + dependencies + first start)
    console.log(`install times (ms): ${JSON.stringify(timings)}`)
    await cleanupState(dir)
  })

  // the three npm packages install at once: most of each is the user's npm fetching (network), and
  // concurrent installs into one state dir are what tutti must handle anyway
  it.concurrent(
    'npm:@modelcontextprotocol/server-memory installs with its dependencies, ' + 'is ready, and answers in both eras',
    async ({ expect }) => {
      const res = await install('server-memory', ['npm:@modelcontextprotocol/server-memory'])
      expect(res).toMatchObject({ key: 'memory', state: { status: 'ready' }, source: { kind: 'npm package' } })
      expect(res.dependencies.count).toBeGreaterThan(0)
      const answers = await callBoth('memory_read_graph', {})
      for (const a of answers) expect(JSON.parse(a)).toMatchObject({ entities: [], relations: [] })
      // the context cost, shown before the user pays it: counts and bytes, never the schemas
      const available = await tuttiJson(dir, ['connector', 'available'])
      const mcp = available.connectors
        .find((c: { key: string }) => c.key === 'memory')
        .interfaces.find((i: { kind: string }) => i.kind === 'mcp')
      const client = await modernClient(binding)
      const listed = (await client.listTools()).tools.filter((t) => t.name.startsWith('memory_'))
      await client.close()
      expect(mcp).toMatchObject({ tools: listed.length, schemaBytes: expect.any(Number) })
      expect(mcp.schemaBytes).toBeGreaterThan(JSON.stringify(listed.map((t) => t.inputSchema)).length)
      expect(JSON.stringify(available)).not.toContain('inputSchema')
      const table = await tutti(dir, ['connector', 'available'])
      expect(table.stdout).toMatch(
        new RegExp(`mcp\\s+MCP server "connector", tools memory_\\*\\s+${listed.length} tools, \\d+\\.\\d kB\\s+ready`),
      )
      // the generated manifest is in the release, covered by its digest
      const release = path.join(dir, 'connectors', 'memory', 'releases', res.digest)
      expect(JSON.parse(fs.readFileSync(path.join(release, 'tutti-connector.json'), 'utf8'))).toMatchObject({
        key: 'memory',
        mcp: { command: 'node', args: ['dist/index.js'] },
      })
    },
  )

  it.concurrent('npm:@modelcontextprotocol/server-filesystem with a directory after "--"', async ({ expect }) => {
    const allowed = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-fs-allowed-'))
    fs.writeFileSync(path.join(allowed, 'hello.txt'), 'hello from the allowed dir')
    const res = await install('server-filesystem', ['npm:@modelcontextprotocol/server-filesystem', '--', allowed])
    expect(res).toMatchObject({ key: 'filesystem', state: { status: 'ready' } })
    for (const a of await callBoth('filesystem_read_text_file', { path: path.join(allowed, 'hello.txt') }))
      expect(a).toBe('hello from the allowed dir')
  })

  it.concurrent('npm:@modelcontextprotocol/server-everything, pinned by a range', async ({ expect }) => {
    const res = await install('server-everything', [
      'npm:@modelcontextprotocol/server-everything@>=2026.1.0',
      '--key',
      'every',
    ])
    expect(res).toMatchObject({ key: 'every', state: { status: 'ready' } })
    expect(await callBoth('every_echo', { message: 'npm' })).toEqual(['Echo: npm', 'Echo: npm'])
  })

  // a published server on SDK v2 (@modelcontextprotocol/server 2.x): it answers the era probe, so the link is
  // 2026-07-28, with no legacy verdict kept; callers of both eras list its tools over that one link
  it.concurrent('npm:@upstash/context7-mcp, an SDK v2 server, is reached over 2026-07-28', async ({ expect }) => {
    const res = await install('context7', ['npm:@upstash/context7-mcp@>=4.1.1'])
    expect(res).toMatchObject({ key: 'context7', state: { status: 'ready' } })
    const status = await tuttiJson(dir, ['daemon', 'status'])
    const link = status.connectors.find((c: { key: string }) => c.key === 'context7')
    expect(link).toMatchObject({ upstream: 'running', protocolVersion: '2026-07-28' })
    expect(fs.existsSync(path.join(dir, 'upstream-eras', 'context7.json'))).toBe(false)
    for (const make of [modernClient, legacyClient]) {
      const client = await make(binding)
      const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('context7_'))
      await client.close()
      expect(names).toContain('context7_resolve-library-id')
    }
  })

  it(
    'a server.json npm entry: packageArguments applied, ' +
      'a secret environment variable gates readiness until connect',
    async () => {
      const file = serverJson({
        name: 'io.github.modelcontextprotocol/server-memory',
        title: 'Memory (registry)',
        description: 'knowledge graph memory',
        version: '2026.8.31',
        packages: [
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-memory',
            version: '2026.8.31',
            transport: { type: 'stdio' },
            environmentVariables: [
              {
                name: 'MEMORY_FILE_PATH',
                description: 'where the graph is kept',
                default: '/tmp/ignored-default.jsonl',
              },
              {
                name: 'MEMORY_API_TOKEN',
                description: 'a token the server is given',
                isSecret: true,
                isRequired: true,
              },
            ],
          },
        ],
      })
      const res = await install('server.json memory', [file, '--key', 'regmem'])
      expect(res).toMatchObject({ key: 'regmem', state: { status: 'needs-auth' } })
      const graph = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-regmem-')), 'graph.jsonl')
      const connected = await tuttiJson(dir, [
        'connector',
        'connect',
        'regmem',
        '--env',
        'MEMORY_API_TOKEN=regmem-secret-value',
        '--set',
        `MEMORY_FILE_PATH=${graph}`,
      ])
      expect(connected.state).toMatchObject({ status: 'ready' })
      const client = await modernClient(binding)
      await client.callTool({
        name: 'regmem_create_entities',
        arguments: { entities: [{ name: 'tutti', entityType: 'tool', observations: ['from server.json'] }] },
      })
      await client.close()
      // the setting reached the server: it wrote where it was told
      expect(fs.readFileSync(graph, 'utf8')).toContain('from server.json')
      const answers = await callBoth('regmem_read_graph', {})
      for (const a of answers) expect(JSON.parse(a).entities.map((e: { name: string }) => e.name)).toEqual(['tutti'])
    },
  )

  for (const format of ['claude', 'agent', 'codex'] as const) {
    it(
      `a ${format} plugin: MCP (root and data placeholders), CLI shim and Skill each work; uncarried parts are ` +
        `named on stderr`,
      async () => {
        const name = `${format}-kit`
        const pkg = pluginPackage(format, name)
        const out = await tutti(dir, ['connector', 'install', pkg, '--json'])
        expect(out.code).toBe(0)
        const res = JSON.parse(out.stdout)
        expect(res).toMatchObject({ key: name, version: '1.2.0', state: { status: 'ready' } })
        expect(out.stderr).toMatch(/skipped: slash commands \(commands\)/)
        expect(out.stderr).toMatch(/skipped: hooks \(hooks\/hooks\.json\)/)
        expect(await callBoth(`${name}_echo`, { message: format })).toEqual([format, format])
        // ${…PLUGIN_DATA} became the connector's data dir in the server's environment
        const client = await modernClient(binding)
        const pid = Number(text(await client.callTool({ name: `${name}_pid`, arguments: {} })))
        await client.close()
        const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
        expect(environ).toContain(`PLUGIN_DATA_AT=${path.join(dir, 'connectors', name, 'data')}`)
        const shim = path.join(dir, 'bin', `tutti-connector-${name}`)
        const cli = await run(shim, ['hello'], { PATH: process.env.PATH })
        expect(cli).toMatchObject({ code: 0, stdout: 'plugin cli hello data=set\n' })
        const available = await tuttiJson(dir, ['connector', 'available'])
        const entry = available.connectors.find((c: { key: string }) => c.key === name)
        expect(entry.skills.map((s: { name: string }) => s.name)).toEqual([`${name}-guide`])
      },
    )
  }

  it("a plugin's Skill is in Codex's skills/list", async () => {
    await tuttiJson(dir, ['connector', 'install', pluginPackage('claude', 'skill-kit')])
    await tuttiJson(dir, ['connector', 'install', pluginPackage('agent', 'portable-kit')])
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-sources-home-'))
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-sources-ws-'))
    const runtime = await prepareRuntime({
      provider: 'codex',
      workspace,
      session: 'sources-codex',
      stateDir: dir,
      env: { ...process.env, HOME: home, CODEX_HOME: '' },
    })
    const codex = await CodexAppServer.start(
      { PATH: runtime.env.PATH, HOME: home, RUST_LOG: 'warn', ...runtime.env },
      workspace,
    )
    try {
      const res = await codex.request('skills/list', { cwds: [workspace], forceReload: true })
      const names = res.data.flatMap((d: { skills: Array<{ name: string }> }) => d.skills.map((s) => s.name))
      // Codex finds the Claude plugin's manifest above the linked Skill and names it as a plugin Skill
      expect(names).toEqual(expect.arrayContaining(['skill-kit:skill-kit-guide', 'portable-kit-guide']))
    } finally {
      await codex.stop()
    }
  })

  it('--dry-run --json prints the generated manifest and changes nothing', async () => {
    const before = snapshotTree(dir)
    const out = await tuttiJson(dir, ['connector', 'install', pluginPackage('claude', 'dry-kit'), '--dry-run'])
    expect(out).toMatchObject({
      dryRun: true,
      generated: true,
      manifest: {
        key: 'dry-kit',
        mcp: {
          transport: 'stdio',
          command: 'node',
          args: ['${TUTTI_CONNECTOR_ROOT}/server.mjs'],
          env: { PLUGIN_DATA_AT: '${TUTTI_CONNECTOR_DATA}' },
        },
        skills: 'skills',
        cli: { entrypoint: 'bin/dry-kit' },
      },
    })
    expect(out.source.skipped).toEqual(expect.arrayContaining([expect.stringMatching(/^slash commands/)]))
    expect(snapshotTree(dir)).toEqual(before)
  })

  describe('what cannot be mapped exits 2 with the reason and leaves the disk unchanged', () => {
    const refused = async (args: string[], message: RegExp, env?: NodeJS.ProcessEnv) => {
      const before = snapshotTree(dir)
      const out = await tutti(dir, ['connector', 'install', ...args], env ? { env } : {})
      expect(out.code, out.stdout + out.stderr).toBe(2)
      expect(out.stdout + out.stderr).toMatch(message)
      expect(snapshotTree(dir)).toEqual(before)
    }
    it('several MCP servers without --server list the choices', async () => {
      await refused(
        [pluginPackage('claude', 'two-kit', { servers: 2 })],
        /2 MCP servers \(main, extra-1\); choose one with --server NAME/,
      )
      const both = serverJson({
        name: 'io.example/both',
        description: 'd',
        version: '1.0.0',
        packages: [
          {
            registryType: 'npm',
            identifier: '@modelcontextprotocol/server-memory',
            version: '2026.8.31',
            transport: { type: 'stdio' },
          },
        ],
        remotes: [{ type: 'streamable-http', url: 'https://example.com/mcp' }],
      })
      await refused([both], /server\.json has 2 MCP servers \(npm, streamable-http\)/)
    })
    it('a runtime that is not on PATH is named', async () => {
      const py = serverJson({
        name: 'io.example/weather-mcp',
        description: 'd',
        version: '0.5.0',
        packages: [
          {
            registryType: 'pypi',
            identifier: 'weather-mcp-server',
            version: '0.5.0',
            runtimeHint: 'uvx',
            transport: { type: 'stdio' },
          },
        ],
      })
      await refused([py], /runs with uvx, and uvx is not on this shell's PATH/, { PATH: '/usr/bin:/bin' })
    })
    it('a malformed server.json or plugin.json names the field', async () => {
      const bad = serverJson({
        name: 'io.example/bad',
        description: 'd',
        version: '1.0.0',
        packages: [{ registryType: 'npm', transport: { type: 'stdio' } }],
      })
      await refused([bad], /server\.json: packages\.0\.identifier: /)
      const plugin = pluginPackage('claude', 'broken-kit')
      fs.writeFileSync(path.join(plugin, '.claude-plugin', 'plugin.json'), '{"name": ')
      await refused([plugin], /\.claude-plugin\/plugin\.json: not valid JSON/)
      const unnamed = pluginPackage('agent', 'unnamed-kit')
      fs.writeFileSync(path.join(unnamed, 'plugin.json'), '{"version": "1.0.0"}')
      await refused([unnamed], /plugin\.json: name: /)
    })
    it('--key, --server and server arguments for a release that brings its own manifest', async () => {
      const own = pluginPackage('claude', 'own-kit')
      fs.writeFileSync(
        path.join(own, 'tutti-connector.json'),
        JSON.stringify({ schemaVersion: 1, key: 'own', name: 'Own', version: '1.0.0', skills: 'skills' }),
      )
      await refused([own, '--key', 'other'], /--key: this release names its key in tutti-connector\.json/)
      await refused([own, '--server', 'main'], /--server: this release declares its one MCP server/)
      await refused([own, '--', '--flag'], /arguments after "--" are for packages without a tutti-connector\.json/)
    })
    it('an npm spec that does not exist', async () => {
      await refused(
        ['npm:@tutti-test-nonexistent/no-such-mcp-server-anywhere'],
        /no such package or version in the npm registry/,
      )
    })
  })
})
