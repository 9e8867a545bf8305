import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parse } from 'smol-toml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime } from 'tutti'
import { connected, installed } from '../support/in-process.js'
import { cleanupState, EXAMPLES, NPM_BIN, tempStateDir, tutti } from '../support/tutti.js'

const API_KEY = 'everything-key-3141592653'

describe('session projections', () => {
  let dir: string
  let home: string
  const secrets: string[] = [API_KEY]
  const env = () => ({
    ...process.env,
    HOME: home,
    CODEX_HOME: '',
    PATH: `${NPM_BIN}${path.delimiter}${process.env.PATH}`,
  })

  beforeAll(async () => {
    dir = tempStateDir('proj')
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-home-'))
    await installed(dir, path.join(EXAMPLES, 'notes'))
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: API_KEY } })
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    'codex: an isolated CODEX_HOME with the user config, ' +
      'their servers kept, "connector" replaced whole, Skills linked',
    async () => {
      fs.mkdirSync(path.join(home, '.codex'), { recursive: true })
      fs.writeFileSync(
        path.join(home, '.codex', 'config.toml'),
        [
          'model = "o3"',
          '',
          '[mcp_servers.mine]',
          'command = "my-server"',
          '',
          '[mcp_servers.connector]',
          'command = "old-connector"',
          '',
          '[mcp_servers.connector.env]',
          'OLD = "1"',
          '',
          '[mcp_servers.connector.tools.x]',
          'enabled = false',
          '',
        ].join('\n'),
      )
      fs.writeFileSync(path.join(home, '.codex', 'auth.json'), '{"login":"user"}')
      const r = await prepareRuntime({
        provider: 'codex',
        workspace: '/src/app',
        session: 'codex-1',
        stateDir: dir,
        env: env(),
      })
      secrets.push(r.env.TUTTI_CONNECTOR_TOKEN!)
      expect(r.projection.kind).toBe('codex')
      const codexHome = (r.projection as { codexHome: string }).codexHome
      expect(codexHome.startsWith(path.join(dir, 'sessions'))).toBe(true)
      expect(r.env.CODEX_HOME).toBe(codexHome)
      const config = parse(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8')) as any
      expect(config.model).toBe('o3')
      expect(config.mcp_servers.mine).toEqual({ command: 'my-server' })
      expect(config.mcp_servers.connector).toEqual({
        url: r.mcpServers[0]!.url,
        bearer_token_env_var: 'TUTTI_CONNECTOR_TOKEN',
      })
      expect(fs.readlinkSync(path.join(codexHome, 'auth.json'))).toBe(path.join(home, '.codex', 'auth.json'))
      expect(fs.readdirSync(path.join(codexHome, 'skills')).sort()).toEqual(['everything-tour', 'notes-workflow'])
      expect(fs.readFileSync(path.join(codexHome, 'skills', 'notes-workflow', 'SKILL.md'), 'utf8')).toMatch(
        /name: notes-workflow/,
      )
      expect(fs.statSync(path.join(codexHome, 'config.toml')).mode & 0o777).toBe(0o600)
    },
  )

  it(
    'codex: the user config under $CODEX_HOME wins; ' + 'a broken one is a clear input error that changes nothing',
    async () => {
      const custom = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-codex-home-'))
      fs.writeFileSync(path.join(custom, 'config.toml'), 'model = "custom"\n')
      const r = await prepareRuntime({
        provider: 'tutti-agent',
        workspace: 'w',
        session: 'ta-1',
        stateDir: dir,
        env: { ...env(), CODEX_HOME: custom },
      })
      secrets.push(r.env.TUTTI_CONNECTOR_TOKEN!)
      expect(
        parse(fs.readFileSync(path.join((r.projection as { codexHome: string }).codexHome, 'config.toml'), 'utf8'))
          .model,
      ).toBe('custom')
      fs.writeFileSync(path.join(custom, 'config.toml'), 'model = \n[[broken')
      const res = await tutti(
        dir,
        ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'ta-2', '--json'],
        { env: { CODEX_HOME: custom } },
      )
      expect(res.code).toBe(2)
      expect(JSON.parse(res.stdout).error.message).toMatch(/config\.toml is not valid TOML/)
    },
  )

  it(
    'claude: --mcp-config names the token variable, ' +
      '--add-dir holds the Skills, the SDK options carry the same server',
    async () => {
      const r = await prepareRuntime({
        provider: 'claude',
        workspace: '/src/app',
        session: 'claude-1',
        stateDir: dir,
        env: env(),
      })
      const token = r.env.TUTTI_CONNECTOR_TOKEN!
      secrets.push(token)
      const p = r.projection as import('tutti').ClaudeProjection
      expect(p.args).toEqual(['--mcp-config', p.mcpConfigPath, '--add-dir', p.addDir])
      expect(JSON.parse(fs.readFileSync(p.mcpConfigPath, 'utf8'))).toEqual({
        mcpServers: {
          connector: {
            type: 'http',
            url: r.mcpServers[0]!.url,
            headers: { Authorization: 'Bearer ${TUTTI_CONNECTOR_TOKEN}' },
          },
        },
      })
      expect(fs.readdirSync(path.join(p.addDir, '.claude', 'skills')).sort()).toEqual([
        'everything-tour',
        'notes-workflow',
      ])
      expect(p.sdkMcpServers.connector).toEqual({
        type: 'http',
        url: r.mcpServers[0]!.url,
        headers: r.mcpServers[0]!.headers,
      })
    },
  )

  it('every projection derives from the one mcpServers list', async () => {
    const r = await prepareRuntime({
      provider: 'claude',
      workspace: 'w',
      session: 'one-list',
      stateDir: dir,
      env: env(),
    })
    secrets.push(r.env.TUTTI_CONNECTOR_TOKEN!)
    expect(r.mcpServers).toEqual([
      {
        name: 'connector',
        type: 'http',
        url: expect.stringMatching(/\/mcp\/connector$/),
        headers: { Authorization: `Bearer ${r.env.TUTTI_CONNECTOR_TOKEN}` },
      },
    ])
    expect(r.env.PATH!.split(path.delimiter)[0]).toBe(path.join(dir, 'bin'))
    expect(r.skillRoots.map((s) => s.connector)).toEqual(['everything', 'notes'])
    for (const root of r.skillRoots) expect(fs.existsSync(root.dir)).toBe(true)
  })

  describe('acp', () => {
    const initWith = (http: unknown) => ({ protocolVersion: 1, agentCapabilities: { mcpCapabilities: { http } } })
    it('http === true: session/new entries with the header list', async () => {
      const r = await prepareRuntime({
        provider: 'acp',
        workspace: 'w',
        session: 'acp-1',
        stateDir: dir,
        agentInitialize: { jsonrpc: '2.0', id: 0, result: initWith(true) },
      })
      secrets.push(r.env.TUTTI_CONNECTOR_TOKEN!)
      expect(r.projection).toEqual({
        kind: 'acp',
        connectors: { attached: true },
        mcpServers: [
          {
            type: 'http',
            name: 'connector',
            url: r.mcpServers[0]!.url,
            headers: [{ name: 'Authorization', value: `Bearer ${r.env.TUTTI_CONNECTOR_TOKEN}` }],
          },
        ],
      })
      expect(r.skillRoots).toHaveLength(2)
      expect(r.prompt).toMatch(/connector/)
    })

    it.each([
      ['false', initWith(false)],
      ['missing', { protocolVersion: 1, agentCapabilities: {} }],
      ['malformed', 'not json at all'],
      ['absent', undefined],
    ])('http %s: a plain runtime, nothing attached', async (_label, init) => {
      const r = await prepareRuntime({
        provider: 'acp',
        workspace: 'w',
        session: `acp-${_label}`,
        stateDir: dir,
        agentInitialize: init,
      })
      expect(r).toMatchObject({
        env: {},
        mcpServers: [],
        skillRoots: [],
        prompt: '',
        projection: { kind: 'acp', mcpServers: [], connectors: { attached: false } },
      })
    })

    it('daemon unreachable: a plain runtime, exit 0, never a failed start', async () => {
      const blocker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-blocked-')), 'file')
      fs.writeFileSync(blocker, 'a file where the state directory would go')
      const init = path.join(os.tmpdir(), `tutti-init-${process.pid}.json`)
      fs.writeFileSync(init, JSON.stringify({ result: initWith(true) }))
      const res = await tutti(path.join(blocker, 'state'), [
        'session',
        'prepare',
        '--provider',
        'acp',
        '--workspace',
        'w',
        '--session',
        's',
        '--agent-initialize',
        init,
        '--json',
      ])
      expect(res.code).toBe(0)
      const r = JSON.parse(res.stdout)
      expect(r).toMatchObject({
        env: {},
        mcpServers: [],
        skillRoots: [],
        projection: { connectors: { attached: false, reason: expect.stringMatching(/daemon could not be reached/) } },
      })
      const broken = path.join(os.tmpdir(), `tutti-init-broken-${process.pid}.json`)
      fs.writeFileSync(broken, '{ "result": ')
      const res2 = await tutti(dir, [
        'session',
        'prepare',
        '--provider',
        'acp',
        '--workspace',
        'w',
        '--session',
        's2',
        '--agent-initialize',
        broken,
        '--json',
      ])
      expect(res2.code).toBe(0)
      expect(JSON.parse(res2.stdout).mcpServers).toEqual([])
    })
  })

  it('the runtime prompt names the native mechanisms and never a retired command', async () => {
    const r = await prepareRuntime({ provider: 'codex', workspace: 'w', session: 'prompt', stateDir: dir, env: env() })
    secrets.push(r.env.TUTTI_CONNECTOR_TOKEN!)
    expect(r.prompt).toMatch(/MCP server named "connector"/)
    expect(r.prompt).toMatch(/tutti-connector-<connector>/)
    expect(r.prompt).toMatch(/Skill/)
    expect(r.prompt).toMatch(/tutti connector available/)
    expect(r.prompt).toMatch(
      /Notes \(notes\): MCP tools notes_\*, command tutti-connector-notes; Skills: notes-workflow/,
    )
    expect(r.prompt).not.toMatch(/connector (invoke|capabilities|skills|skill read)/)
  })

  it('no token or credential in any file a projection wrote, in available, or in the log', async () => {
    // projections of its own, of every kind that writes files (with the other tests' tokens, if they ran, checked too)
    for (const [provider, session] of [
      ['codex', 'leak-1'],
      ['claude', 'leak-2'],
      ['tutti-agent', 'leak-3'],
      ['codex', 'leak-1'],
    ] as const) {
      secrets.push(
        (await prepareRuntime({ provider, workspace: 'w', session, stateDir: dir, env: env() })).env
          .TUTTI_CONNECTOR_TOKEN!,
      )
    }
    const files: string[] = []
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name)
        if (e.isDirectory()) walk(p)
        else if (e.isFile()) files.push(p)
      }
    }
    walk(path.join(dir, 'sessions'))
    expect(files.length).toBeGreaterThan(3)
    const tokens = secrets.filter((s) => s.startsWith('tutti_'))
    expect(tokens.length).toBeGreaterThan(4)
    for (const f of [...files, path.join(dir, 'daemon.log'), path.join(dir, 'sessions.json')]) {
      const text = fs.readFileSync(f, 'utf8')
      for (const s of secrets) expect(text.includes(s), `${f} contains a secret`).toBe(false)
    }
    const available = (await tutti(dir, ['connector', 'available', '--json'])).stdout
    for (const s of secrets) expect(available).not.toContain(s)
  })
})
