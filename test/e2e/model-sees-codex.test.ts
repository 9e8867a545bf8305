import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codexMcpReload, prepareRuntime, watchConnectors, type CodexProjection, type ConnectorWatch, type PreparedRuntime } from 'tutti'
import { codexBinary, CodexAppServer } from '../support/agents.js'
import { eventually } from '../support/eventually.js'
import { functionsOf, inputText, namespaceFunctions, startFakeOpenAI, type FakeOpenAI } from '../support/fake-model-api/openai.js'
import type { RecordedRequest } from '../support/fake-model-api/server.js'
import { filesContaining, MEMORY_TOOLS, seenConnector, skillDescription, treeArgv } from '../support/model-sees.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * What the model is given when Codex (@openai/codex from npm) runs with
 * tutti: the real binary with a `model_providers` entry pointing at a fake
 * Responses API on loopback that records every request. Codex puts an MCP
 * server's tools into one `namespace` tool, `mcp__<server>`, and lists
 * Skills in a developer message.
 */

const TOKEN_SHAPE = /tutti_[A-Za-z0-9_-]{43}/
const NAMESPACE = 'mcp__connector'
const connectorFunctions = (req: RecordedRequest, key: string) => namespaceFunctions(req, NAMESPACE).filter((n) => n.startsWith(`${key}_`))
const memoryFunctions = (key: string) => MEMORY_TOOLS.map((t) => `${key}_${t}`)

/** The user's own Codex config: the fake as the model provider, its key from the environment. */
function userCodexHome(home: string, fake: FakeOpenAI): void {
  fs.mkdirSync(path.join(home, '.codex'), { recursive: true })
  fs.writeFileSync(
    path.join(home, '.codex', 'config.toml'),
    [
      'model = "gpt-fake-model-sees"',
      'model_provider = "fake"',
      '',
      '[model_providers.fake]',
      'name = "fake Responses API on loopback"',
      `base_url = "${fake.origin}/v1"`,
      'wire_api = "responses"',
      'env_key = "TUTTI_FAKE_OPENAI_KEY"',
      '',
    ].join('\n'),
  )
}

/** Live processes whose environment holds `entry` (the agent and whatever it started). */
function pidsWithEnv(entry: string): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(entry)) out.push(Number(name))
    } catch {
      // gone, or not ours to read
    }
  }
  return out
}

describe('what the model sees from Codex', () => {
  let dir: string
  let home: string
  let workspace: string
  let fake: FakeOpenAI
  let runtime: PreparedRuntime
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    dir = tempStateDir('model-sees-codex')
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-codex-home-'))
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-codex-ws-'))
    fake = await startFakeOpenAI()
    userCodexHome(home, fake)
    await tuttiJson(dir, ['connector', 'install', seenConnector('alpha')])
    runtime = await prepareRuntime({ provider: 'codex', workspace, session: 'codex-model', stateDir: dir, env: { ...process.env, HOME: home, CODEX_HOME: '' } })
    env = { PATH: runtime.env.PATH, HOME: home, CODEX_HOME: runtime.env.CODEX_HOME, TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN, TUTTI_FAKE_OPENAI_KEY: 'sk-fake-model-sees', RUST_LOG: 'warn' }
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    for (const d of [home, workspace]) if (d) fs.rmSync(d, { recursive: true, force: true })
  })

  it("at start (codex exec with the prepared CODEX_HOME): the first model request has every alpha tool in the mcp__connector namespace with the server's schema, and the alpha Skill", async () => {
    expect((runtime.projection as CodexProjection).codexHome).toBe(runtime.env.CODEX_HOME)
    const child = spawn(codexBinary(), ['exec', '--skip-git-repo-check', '--disable', 'plugins', '-C', workspace, 'What can you do here?'], { env, cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const stderr: string[] = []
    child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()))
    const first = await fake.next()
    expect(connectorFunctions(first.request, 'alpha').sort()).toEqual(memoryFunctions('alpha'))
    const search = functionsOf(first.request).get(NAMESPACE)!.find((t) => t.name === 'alpha_search_nodes')!
    expect(search.description).toMatch(/search/i)
    expect(search.parameters).toMatchObject({ type: 'object', properties: { query: { type: 'string' } } })
    expect(inputText(first.request)).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
    for (const argv of treeArgv(child.pid!)) expect(argv).not.toMatch(TOKEN_SHAPE)
    first.reply({ text: 'I can use the alpha graph.' })
    expect(await exited, stderr.join('').slice(-2000)).toBe(0)
  })

  describe('a running codex app-server thread', () => {
    let codex: CodexAppServer
    let threadId: string
    let watch: ConnectorWatch | undefined
    let reloads = 0
    const reloadErrors: unknown[] = []
    beforeAll(async () => {
      codex = await CodexAppServer.start(env, workspace)
      threadId = (await codex.request('thread/start', { cwd: workspace })).thread.id
    })
    afterAll(async () => {
      await watch?.close()
      await codex?.stop()
    })

    /** One turn: its model request as the fake received it, answered with text; resolves after turn/completed. */
    const turn = async (text: string): Promise<RecordedRequest> => {
      const done = codex.notifications.filter((n) => n.method === 'turn/completed' && n.params?.threadId === threadId).length
      await codex.request('turn/start', { threadId, input: [{ type: 'text', text, text_elements: [] }] })
      const exchange = await fake.next()
      exchange.reply({ text: `answered ${text}` })
      await eventually(() => codex.notifications.filter((n) => n.method === 'turn/completed' && n.params?.threadId === threadId).length, (n) => n > done)
      return exchange.request
    }

    it('the first turn carries the alpha tools', async () => {
      const first = await turn('one')
      expect(connectorFunctions(first, 'alpha').sort()).toEqual(memoryFunctions('alpha'))
    })

    it('without the helper, a connector installed before the next turn is not in it: Codex does not refresh by itself', async () => {
      await tuttiJson(dir, ['connector', 'install', seenConnector('gamma')])
      const next = await turn('two')
      // the install finished before turn/start, so a Codex that listed tools at turn start would have it
      expect(connectorFunctions(next, 'gamma')).toEqual([])
      expect(connectorFunctions(next, 'alpha')).toHaveLength(MEMORY_TOOLS.length)
    })

    it('with watchConnectors and the Codex adapter, a connector installed mid-thread is in the next turn, and a removed one is gone', async () => {
      watch = await watchConnectors(
        async () => {
          await codexMcpReload((method, params) => codex.request(method, params))()
          reloads++
        },
        { runtime, onError: (e) => reloadErrors.push(e) },
      )
      await tuttiJson(dir, ['connector', 'install', seenConnector('beta')])
      await eventually(() => reloads, (n) => n >= 1)
      const next = await turn('three')
      expect(connectorFunctions(next, 'beta').sort()).toEqual(memoryFunctions('beta'))
      // the reconnect also brings what the helper did not see happen (gamma, before it started)
      expect(connectorFunctions(next, 'gamma').sort()).toEqual(memoryFunctions('gamma'))

      const before = reloads
      await tuttiJson(dir, ['connector', 'uninstall', 'beta'])
      await eventually(() => reloads, (n) => n > before)
      const after = await turn('four')
      expect(connectorFunctions(after, 'beta')).toEqual([])
      expect(connectorFunctions(after, 'alpha')).toHaveLength(MEMORY_TOOLS.length)
      expect(reloadErrors).toEqual([])
    })

    it('the token reaches neither the model, nor argv, nor any file Codex, the adapter or the projection wrote', () => {
      const token = runtime.env.TUTTI_CONNECTOR_TOKEN!
      expect(token).toMatch(TOKEN_SHAPE)
      for (const req of fake.requests) expect(JSON.stringify(req)).not.toContain(token)
      const pids = pidsWithEnv(`CODEX_HOME=${runtime.env.CODEX_HOME}`)
      expect(pids.length).toBeGreaterThan(0)
      for (const pid of pids) for (const argv of treeArgv(pid)) expect(argv).not.toMatch(TOKEN_SHAPE)
      // the adapter's revision went into the session's own config.toml, beside the token's variable name
      expect(fs.readFileSync(path.join(runtime.env.CODEX_HOME!, 'config.toml'), 'utf8')).toMatch(/X-Tutti-Connectors-Revision/)
      // Codex snapshots the shell environment for the model's commands into $CODEX_HOME/shell_snapshots/ while it runs
      expect(filesContaining(runtime.env.CODEX_HOME!, token)).toEqual([])
      expect(filesContaining(path.join(dir, 'sessions'), token)).toEqual([])
      expect(filesContaining(home, token)).toEqual([])
      expect(filesContaining(workspace, token)).toEqual([])
    })
  })
})
