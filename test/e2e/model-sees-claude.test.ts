import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime, type ClaudeProjection } from 'tutti'
import { CLAUDE_OFFLINE, claudeBinary } from '../support/agents.js'
import { ClaudeStream, STREAM_FLAGS, type McpServerStatus } from '../support/claude-stream.js'
import { eventually } from '../support/eventually.js'
import { promptText, startFakeAnthropic, toolNames, toolResults, toolsOf, type FakeAnthropic } from '../support/fake-model-api/anthropic.js'
import type { RecordedRequest } from '../support/fake-model-api/server.js'
import { filesContaining, MEMORY_TOOLS, seenConnector, skillDescription, treeArgv } from '../support/model-sees.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * What the model is given when Claude Code (@anthropic-ai/claude-code from
 * npm) runs with tutti: the real binary against a fake Anthropic API on
 * loopback that records every request and answers as the test scripts it.
 * One long stream-json session per way of starting Claude Code; each is
 * asked at start (tools and Skills in the first model request) and
 * mid-session (a connector installed while a model request is held open is
 * in the tools of the next request of the same turn).
 */

const TOKEN_SHAPE = /tutti_[A-Za-z0-9_-]{43}/
const mcpTools = (req: RecordedRequest, key: string) => toolNames(req).filter((n) => n.startsWith(`mcp__connector__${key}_`))
const connectorTools = (status: McpServerStatus[]) => status.find((s) => s.name === 'connector')?.tools ?? []

const run = (file: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { ...options, maxBuffer: 16 * 1024 * 1024, timeout: 90_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }))
  })

describe('what the model sees from Claude Code', () => {
  let dir: string
  let home: string
  let workspace: string
  let fake: FakeAnthropic
  beforeAll(async () => {
    dir = tempStateDir('model-sees-claude')
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-claude-home-'))
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-claude-ws-'))
    fake = await startFakeAnthropic()
    // side requests of Claude Code that carry no tools (none are expected) are answered without the test
    fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    await tuttiJson(dir, ['connector', 'install', seenConnector('alpha')])
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    for (const d of [home, workspace]) if (d) fs.rmSync(d, { recursive: true, force: true })
  })

  const modelEnv = (): NodeJS.ProcessEnv => ({ HOME: home, ...CLAUDE_OFFLINE, ANTHROPIC_BASE_URL: fake.origin, ANTHROPIC_API_KEY: 'sk-ant-fake-model-sees' })

  describe('started with the prepared projection (--mcp-config, --add-dir; HTTP, 2026-07-28)', () => {
    let claude: ClaudeStream
    let projection: ClaudeProjection
    let token: string
    let env: NodeJS.ProcessEnv
    beforeAll(async () => {
      const runtime = await prepareRuntime({ provider: 'claude', workspace, session: 'claude-model', stateDir: dir })
      projection = runtime.projection as ClaudeProjection
      token = runtime.env.TUTTI_CONNECTOR_TOKEN!
      // tool search off: every MCP tool goes into the request's tools with its schema, as the model gets it
      env = { PATH: runtime.env.PATH, TUTTI_CONNECTOR_TOKEN: token, ...modelEnv(), ENABLE_TOOL_SEARCH: 'false' }
      claude = await ClaudeStream.start(claudeBinary(), [...STREAM_FLAGS, '--strict-mcp-config', '--allowedTools', 'mcp__connector__alpha_read_graph', ...projection.args], { env, cwd: workspace })
    })
    afterAll(async () => {
      await claude?.stop()
    })

    it("at start: the first model request has every mcp__connector__alpha_* tool with the server's schema, and the alpha Skill's name and description", async () => {
      claude.send('What can you do here?')
      const first = await fake.next()
      expect(mcpTools(first.request, 'alpha').sort()).toEqual(MEMORY_TOOLS.map((t) => `mcp__connector__alpha_${t}`))
      const readGraph = toolsOf(first.request).find((t) => t.name === 'mcp__connector__alpha_search_nodes')!
      expect(readGraph.description).toMatch(/search/i)
      expect(readGraph.input_schema).toMatchObject({ type: 'object', properties: { query: { type: 'string' } } })
      expect(toolNames(first.request)).toContain('Skill')
      expect(promptText(first.request)).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
      first.reply({ text: 'I can use the alpha graph.' })
      expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
    })

    it('mid-session: a connector installed while a model request is held is in the next request of that same turn (Claude Code refreshes on list_changed by itself)', async () => {
      claude.send('Look at the graph.')
      const held = await fake.next()
      expect(mcpTools(held.request, 'beta')).toEqual([])

      await tuttiJson(dir, ['connector', 'install', seenConnector('beta')])
      // nothing is done to the session: its own view gains beta from the server's list_changed alone
      const status = await eventually(() => claude.mcpStatus(), (s) => connectorTools(s).includes('beta_read_graph'))
      expect(connectorTools(status)).toEqual(expect.arrayContaining(MEMORY_TOOLS.map((t) => `beta_${t}`)))

      held.reply({ toolUse: { id: 'toolu_model_sees_1', name: 'mcp__connector__alpha_read_graph', input: {} } })
      const next = await fake.next()
      // the same turn, continued after the tool call the first answer asked for
      expect(toolResults(next.request)).toEqual(expect.arrayContaining([expect.objectContaining({ tool_use_id: 'toolu_model_sees_1' })]))
      expect(toolResults(next.request).find((r) => r.tool_use_id === 'toolu_model_sees_1')?.is_error).not.toBe(true)
      expect(mcpTools(next.request, 'beta').sort()).toEqual(MEMORY_TOOLS.map((t) => `mcp__connector__beta_${t}`))
      expect(mcpTools(next.request, 'alpha')).toHaveLength(MEMORY_TOOLS.length)
      next.reply({ text: 'The graph is empty.' })
      expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
    })

    it('with tool search on (the default), the tools are announced to the model by name for ToolSearch', async () => {
      const { ENABLE_TOOL_SEARCH: _off, ...defaults } = env
      const oneShot = run(claudeBinary(), ['-p', 'hello', '--strict-mcp-config', ...projection.args], { env: defaults, cwd: workspace })
      const first = await fake.next()
      expect(toolNames(first.request)).toContain('ToolSearch')
      const prompt = promptText(first.request)
      for (const t of MEMORY_TOOLS) expect(prompt).toContain(`mcp__connector__alpha_${t}`)
      expect(prompt).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
      first.reply({ text: 'hi' })
      expect((await oneShot).code).toBe(0)
    })

    it('the token reaches neither the model, nor argv, nor any file Claude Code or the projection wrote', () => {
      expect(token).toMatch(TOKEN_SHAPE)
      for (const req of fake.requests) expect(JSON.stringify(req)).not.toContain(token)
      for (const argv of treeArgv(claude.pid)) expect(argv).not.toMatch(TOKEN_SHAPE)
      expect(filesContaining(home, token)).toEqual([])
      expect(filesContaining(path.join(dir, 'sessions'), token)).toEqual([])
      expect(filesContaining(workspace, token)).toEqual([])
    })
  })
})
