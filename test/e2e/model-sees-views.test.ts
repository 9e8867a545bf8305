import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime, type ClaudeProjection } from 'tutti'
import { CLAUDE_OFFLINE, claudeBinary, codexBinary } from '../support/agents.js'
import { startFakeAnthropic, toolsOf, type FakeAnthropic } from '../support/fake-model-api/anthropic.js'
import { functionsOf, startFakeOpenAI, type FakeOpenAI } from '../support/fake-model-api/openai.js'
import { requestText } from '../support/fake-model-api/server.js'
import { fullConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { MEMORY_TOOLS } from '../support/model-sees.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * What the model is given of a session's view, with the clients' own tool
 * search on (issue 23 item 5): the real Claude Code and Codex against fake
 * model APIs that record their requests. The session sees alpha only; alpha's
 * `read_graph` is marked alwaysLoad (`connect --always-load`), so Claude Code
 * sends it as a full definition and defers the rest behind its ToolSearch; the
 * server's instructions, which name the session's connectors, are in the
 * request; beta is nowhere.
 */
describe('what the model sees of a view, with tool search', () => {
  let dir: string
  let home: string
  beforeAll(async () => {
    dir = tempStateDir('model-sees-views')
    home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-views-home-')))
    await installed(dir, fullConnector('alpha'))
    await installed(dir, fullConnector('beta'))
    await tuttiJson(dir, ['connector', 'connect', 'alpha', '--always-load', 'read_graph'])
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(home, { recursive: true, force: true })
  })

  /** Runs `command args` until the fake's first model request, answers it, and waits for the exit. */
  async function firstRequest<T>(
    fake: { next(): Promise<{ request: T; reply(a: { text: string }): void }> },
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
  ): Promise<T> {
    const child = spawn(command, args, { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const first = await fake.next()
    first.reply({ text: 'Noted.' })
    expect(await exited, stderr.slice(-2000)).toBe(0)
    return first.request
  }

  describe('Claude Code (ENABLE_TOOL_SEARCH=true)', () => {
    let fake: FakeAnthropic
    beforeAll(async () => {
      fake = await startFakeAnthropic()
      fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    })
    afterAll(() => fake?.close())

    it('the alwaysLoad tool is a full definition, the rest deferred names; the instructions are there', async () => {
      const runtime = await prepareRuntime({
        provider: 'claude',
        workspace: home,
        session: 'claude-view',
        stateDir: dir,
        connectors: ['alpha'],
      })
      const env = {
        ...process.env,
        ...runtime.env,
        HOME: home,
        ...CLAUDE_OFFLINE,
        ANTHROPIC_BASE_URL: fake.origin,
        ANTHROPIC_API_KEY: 'sk-ant-fake-views',
        ENABLE_TOOL_SEARCH: 'true',
      }
      const args = [...(runtime.projection as ClaudeProjection).args, '-p', 'What can you do?']
      const request = await firstRequest(fake, claudeBinary(), args, env)
      const loaded = toolsOf(request).filter((t) => t.name.startsWith('mcp__connector__'))
      expect(loaded.map((t) => t.name)).toEqual(['mcp__connector__alpha_read_graph'])
      expect(loaded[0]!.input_schema).toMatchObject({ type: 'object' })
      expect(toolsOf(request).map((t) => t.name)).toContain('ToolSearch')
      const text = requestText(request)
      // deferred: named for the ToolSearch, not defined
      for (const tool of MEMORY_TOOLS.filter((t) => t !== 'read_graph'))
        expect(text).toContain(`mcp__connector__alpha_${tool}`)
      expect(text).toContain('- alpha (Full alpha): A sample connector [9 tools named alpha_*, Skills]')
      expect(text).not.toMatch(/mcp__connector__beta_|- beta \(/)
    })
  })

  describe('Codex', () => {
    let fake: FakeOpenAI
    beforeAll(async () => {
      fake = await startFakeOpenAI()
    })
    afterAll(() => fake?.close())

    it('the mcp__connector namespace holds only the view, and its description is the instructions', async () => {
      const codexHome = path.join(home, '.codex')
      fs.mkdirSync(codexHome, { recursive: true })
      const config = [
        'model = "gpt-fake-views"',
        'model_provider = "fake"',
        '[model_providers.fake]',
        'name = "fake Responses API on loopback"',
        `base_url = "${fake.origin}/v1"`,
        'wire_api = "responses"',
        'env_key = "TUTTI_FAKE_OPENAI_KEY"',
      ]
      fs.writeFileSync(path.join(codexHome, 'config.toml'), `${config.join('\n')}\n`)
      const runtime = await prepareRuntime({
        provider: 'codex',
        workspace: home,
        session: 'codex-view',
        stateDir: dir,
        connectors: ['alpha'],
        env: { ...process.env, HOME: home, CODEX_HOME: '' },
      })
      const env = {
        PATH: runtime.env.PATH,
        HOME: home,
        CODEX_HOME: runtime.env.CODEX_HOME,
        TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN,
        TUTTI_FAKE_OPENAI_KEY: 'sk-fake-views',
      }
      const args = ['exec', '--skip-git-repo-check', '--disable', 'plugins', '-C', home, 'What can you do?']
      const request = await firstRequest(fake, codexBinary(), args, env)
      const namespace = ((request.body as { tools?: any[] }).tools ?? []).find((t) => t.name === 'mcp__connector')
      expect(
        functionsOf(request)
          .get('mcp__connector')!
          .map((t) => t.name)
          .sort(),
      ).toEqual(MEMORY_TOOLS.map((t) => `alpha_${t}`))
      expect(namespace.description).toContain('- alpha (Full alpha): A sample connector [9 tools named alpha_*')
      expect(namespace.description).not.toContain('- beta')
    })
  })
})
