import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runProgram } from '../support/package-install.js'
import { prepareRuntime, type ClaudeProjection, type CodexProjection, type PreparedRuntime } from 'tutti'
import { CLAUDE_OFFLINE, claudeBinary, CodexAppServer } from '../support/agents.js'
import { memoryConnector } from '../support/fixture-connector.js'
import { connected, installed } from '../support/in-process.js'
import { cleanupState, control, EXAMPLES, tempStateDir } from '../support/tutti.js'

const run = (file: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }) =>
  runProgram(file, args, { ...options, timeout: 60_000 })

describe('real agents use the prepared runtime natively', () => {
  let dir: string
  let home: string
  let workspace: string
  beforeAll(async () => {
    dir = tempStateDir('agents')
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-agent-home-'))
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-workspace-'))
    await installed(dir, path.join(EXAMPLES, 'notes'))
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: 'agents-test-key' } })
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  const agentEnv = (r: PreparedRuntime): NodeJS.ProcessEnv => ({
    PATH: r.env.PATH,
    HOME: home,
    TUTTI_CONNECTOR_TOKEN: r.env.TUTTI_CONNECTOR_TOKEN,
    RUST_LOG: 'warn',
    ...r.env,
  })

  describe('Codex app-server (@openai/codex, offline)', () => {
    let runtime: PreparedRuntime
    let codex: CodexAppServer
    beforeAll(async () => {
      runtime = await prepareRuntime({
        provider: 'codex',
        workspace,
        session: 'codex-e2e',
        stateDir: dir,
        env: { ...process.env, HOME: home, CODEX_HOME: '' },
      })
      codex = await CodexAppServer.start(agentEnv(runtime), workspace)
    })
    afterAll(async () => {
      await codex?.stop()
    })

    const connectorStatus = async () => {
      const res = await codex.request('mcpServerStatus/list', { detail: 'toolsAndAuthOnly' })
      return res.data.find((s: { name: string }) => s.name === 'connector')
    }

    it('mcpServerStatus/list shows the connector server with the example tools under their local names', async () => {
      expect((runtime.projection as CodexProjection).codexHome).toBe(runtime.env.CODEX_HOME)
      const status = await connectorStatus()
      expect(status.toolsError).toBeNull()
      expect(status.authStatus).toBe('bearerToken')
      const tools = Object.keys(status.tools)
      expect(tools).toEqual(
        expect.arrayContaining(['notes_read_graph', 'notes_search_nodes', 'everything_echo', 'everything_get-sum']),
      )
      // every tool under its connector's prefix (a later test may have installed a third connector)
      const keys = (await control(dir, 'status')).connectors.map((c: { key: string }) => c.key)
      expect(tools.filter((t) => !keys.some((k: string) => t.startsWith(`${k}_`)))).toEqual([])
    })

    it('a connector installed afterwards shows up on the next mcpServerStatus/list', async () => {
      await installed(dir, memoryConnector('journal'))
      await codex.request('config/mcpServer/reload')
      const status = await connectorStatus()
      expect(Object.keys(status.tools)).toEqual(expect.arrayContaining(['journal_read_graph', 'notes_read_graph']))
    })

    it('skills/list (forceReload) shows the connector Skills', async () => {
      const res = await codex.request('skills/list', { cwds: [workspace], forceReload: true })
      const skills = res.data.flatMap(
        (d: { skills: Array<{ name: string; description: string; path: string }> }) => d.skills,
      )
      const names = skills.map((s: { name: string }) => s.name)
      expect(names).toEqual(expect.arrayContaining(['notes-workflow', 'everything-tour']))
      const notes = skills.find((s: { name: string }) => s.name === 'notes-workflow')
      expect(notes.description).toMatch(/durable notes/)
    })
  })

  describe('Claude Code (@anthropic-ai/claude-code, isolated HOME, offline)', () => {
    let runtime: PreparedRuntime
    let projection: ClaudeProjection
    let env: NodeJS.ProcessEnv
    beforeAll(async () => {
      runtime = await prepareRuntime({ provider: 'claude', workspace, session: 'claude-e2e', stateDir: dir })
      projection = runtime.projection as ClaudeProjection
      env = {
        PATH: runtime.env.PATH,
        HOME: home,
        TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN,
        ...CLAUDE_OFFLINE,
      }
    })

    it('`claude mcp list` reports the prepared connector server as connected', async () => {
      const config = JSON.parse(fs.readFileSync(projection.mcpConfigPath, 'utf8'))
      // `claude mcp list` takes no --mcp-config: register the prepared entry, as is, in the isolated user config
      const add = await run(
        claudeBinary(),
        ['mcp', 'add-json', '-s', 'user', 'connector', JSON.stringify(config.mcpServers.connector)],
        { env, cwd: workspace },
      )
      expect(add.code, add.stderr).toBe(0)
      const list = await run(claudeBinary(), ['mcp', 'list'], { env, cwd: workspace })
      expect(list.stdout).toMatch(
        new RegExp(`connector: ${runtime.mcpServers[0]!.url.replace(/[.]/g, '\\.')} \\(HTTP\\) - ✔ Connected`),
      )
      // the token itself never went into Claude's config: only the variable
      expect(fs.readFileSync(path.join(home, '.claude.json'), 'utf8')).not.toContain(runtime.env.TUTTI_CONNECTOR_TOKEN!)
    })

    it('with --mcp-config and --add-dir, a session sees mcp__connector__* tools and the connector Skills', async () => {
      const res = await run(
        claudeBinary(),
        ['-p', 'hello', '--output-format', 'stream-json', '--verbose', '--strict-mcp-config', ...projection.args],
        { env, cwd: workspace },
      )
      const init = res.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((m) => m.type === 'system' && m.subtype === 'init')
      expect(init, res.stdout + res.stderr).toBeDefined()
      expect(init.mcp_servers).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'connector', status: 'connected' })]),
      )
      expect(init.tools).toEqual(
        expect.arrayContaining(['mcp__connector__notes_read_graph', 'mcp__connector__everything_echo']),
      )
      expect(
        init.tools.filter((t: string) => t.startsWith('mcp__connector__')).every((t: string) => t.length <= 64),
      ).toBe(true)
      expect(JSON.stringify(init.skills)).toMatch(/notes-workflow/)
      expect(JSON.stringify(init.skills)).toMatch(/everything-tour/)
    })
  })

  it('the tokens never reached any file the projections wrote', async () => {
    // projections of its own (the agents' sessions above are checked too, if they ran)
    for (const [i, provider] of (['codex', 'claude', 'codex', 'claude'] as const).entries()) {
      await prepareRuntime({
        provider,
        workspace,
        session: `files-${i}`,
        stateDir: dir,
        env: { ...process.env, HOME: home, CODEX_HOME: '' },
      })
    }
    const sessions = path.join(dir, 'sessions')
    const texts: string[] = []
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name)
        if (e.isDirectory()) walk(p)
        else if (e.isFile()) texts.push(fs.readFileSync(p, 'utf8'))
      }
    }
    walk(sessions)
    const tokens = JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8'))
    expect(Object.keys(tokens.sessions).length).toBeGreaterThanOrEqual(2)
    expect(texts.length).toBeGreaterThan(3)
    for (const t of texts) expect(t).not.toMatch(/tutti_[A-Za-z0-9_-]{43}/)
  })
})
