import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AcpClient } from '../support/acp-client.js'
import { CLAUDE_OFFLINE } from '../support/agents.js'
import { eventually, until } from '../support/eventually.js'
import {
  promptText,
  startFakeAnthropic,
  toolNames,
  toolResults,
  toolsOf,
  type FakeAnthropic,
} from '../support/fake-model-api/anthropic.js'
import { probeConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { filesContaining, MEMORY_TOOLS, seenConnector, skillDescription, treeArgv } from '../support/model-sees.js'
import { cleanupState, control, isAlive, REPO, tempStateDir, tutti } from '../support/tutti.js'

/**
 * ACP with a real agent from npm: @zed-industries/claude-agent-acp, Zed's ACP
 * adapter around the Claude Agent SDK, which runs Claude Code (the SDK's own
 * cli.js) for each ACP session. The test plays the editor over the agent's
 * stdio (test/support/acp-client.ts), the model is a fake Anthropic API on
 * loopback (ANTHROPIC_BASE_URL), nothing leaves the machine. One agent
 * process per case: one that declares `mcpCapabilities.http` and gets the
 * connector server, one whose initialize lacks it and gets a plain session.
 * That the agent's MCP requests carry its session's token is read from the
 * daemon (`daemon status` counts requests per session token). The agent is
 * one of the Claude Agent SDK family: tutti gives it the token in
 * `session/new`'s `_meta` (Claude Code's env) and a header that names the
 * variable, so Claude Code's command line holds no token.
 */

const AGENT_DIR = path.join(REPO, 'node_modules/@zed-industries/claude-agent-acp')
const AGENT = path.join(AGENT_DIR, 'dist/index.js')
const TOKEN_SHAPE = /tutti_[A-Za-z0-9_-]{43}/
/**
 * Notes the argv the agent starts Claude Code with (what `ps` shows until Claude Code sets its title), then runs it.
 */
const ARGV_PROBE = path.join(REPO, 'test/fixtures/argv-probe.mjs')
const CONNECTOR_TOOLS = MEMORY_TOOLS.map((t) => `mcp__connector__alpha_${t}`)

/** The Claude Code the agent's SDK runs (it resolves @anthropic-ai/claude-agent-sdk from the agent's package). */
function claudeCodeCli(): string {
  const candidates = [
    path.join(AGENT_DIR, 'node_modules/@anthropic-ai/claude-agent-sdk/cli.js'),
    path.join(REPO, 'node_modules/@anthropic-ai/claude-agent-sdk/cli.js'),
  ]
  const found = candidates.find((p) => fs.existsSync(p))
  if (!found)
    throw new Error('the Claude Agent SDK of @zed-industries/claude-agent-acp is not installed (npm ci installs it)')
  return found
}

interface SessionActivity {
  workspace: string
  session: string
  requests: number
  lastSeenAt?: string
}

interface StartedAgent {
  agent: AcpClient
  home: string
  /** One JSON line per Claude Code process the agent started (test/fixtures/argv-probe.mjs). */
  probeFile: string
}

describe('ACP with a real agent from npm (@zed-industries/claude-agent-acp)', () => {
  let dir: string
  let workspace: string
  let fake: FakeAnthropic
  const scratch: string[] = []
  const tmp = (label: string): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-acp-${label}-`))
    scratch.push(d)
    return d
  }

  beforeAll(async () => {
    dir = tempStateDir('acp-agent')
    workspace = tmp('ws')
    fake = await startFakeAnthropic()
    // side requests that carry no tools (none are expected) are answered without the test
    fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    await installed(dir, seenConnector('alpha'))
    // a CLI-only connector: its shim is what the agent's commands must find on PATH
    await installed(dir, probeConnector('beta', { release: 'beta-through-acp' }))
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    for (const d of scratch) fs.rmSync(d, { recursive: true, force: true })
  })
  afterEach(() => {
    // a test that failed while a model request was held: the agent's turn is let finish
    fake.answerUnanswered({ text: 'abandoned by a failed test' })
  })

  /** The real agent, offline: its own HOME, the fake as its model, every MCP tool sent to the model with its schema. */
  function startAgent(): StartedAgent {
    const home = tmp('home')
    const probeFile = path.join(tmp('probe'), 'argv.jsonl')
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      ...CLAUDE_OFFLINE,
      ANTHROPIC_BASE_URL: fake.origin,
      ANTHROPIC_API_KEY: 'sk-ant-fake-acp-agent',
      ENABLE_TOOL_SEARCH: 'false',
      // the agent's own knob for which Claude Code to run: the real one, behind the argv probe
      CLAUDE_CODE_EXECUTABLE: ARGV_PROBE,
      ARGV_PROBE_EXEC: claudeCodeCli(),
      ARGV_PROBE_FILE: probeFile,
      ARGV_PROBE_PATTERN: TOKEN_SHAPE.source,
    }
    return { agent: AcpClient.spawn(process.execPath, [AGENT], { env, cwd: workspace }), home, probeFile }
  }

  const prepare = async (session: string, initialize: unknown) => {
    const res = await tutti(
      dir,
      [
        'session',
        'prepare',
        '--provider',
        'acp',
        '--workspace',
        workspace,
        '--session',
        session,
        '--agent-initialize',
        '-',
        '--json',
      ],
      { input: JSON.stringify(initialize) },
    )
    expect(res.code, res.stderr).toBe(0)
    return { runtime: JSON.parse(res.stdout), stdout: res.stdout }
  }
  const status = () => control<{ sessions: number; sessionActivity: SessionActivity[] }>(dir, 'status')
  const activityOf = async (session: string): Promise<SessionActivity | undefined> =>
    (await status()).sessionActivity.find((s) => s.workspace === workspace && s.session === session)
  const probed = (
    file: string,
  ): Array<{ pid: number; argc: number; matches: Array<{ index: number; after: string | null }> }> =>
    fs.existsSync(file)
      ? fs
          .readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : []

  describe(
    'an agent whose initialize declares mcpCapabilities.http: ' + 'the connector server, with its session token',
    () => {
      let started: StartedAgent
      let initialize: { result: any }
      let runtime: any
      let sessionId: string
      beforeAll(async () => {
        started = startAgent()
        initialize = await started.agent.initialize()
      })
      afterAll(async () => {
        await started?.agent.stop()
      })

      it(
        'initialize declares mcpCapabilities.http and the claudeCode namespace; ' +
          '`tutti session prepare --agent-initialize -` fed that very response ' +
          "gives the connector server in ACP's shape, the token in sessionMeta only",
        async () => {
          expect(initialize.result.agentCapabilities.mcpCapabilities.http).toBe(true)
          expect(initialize.result.agentCapabilities._meta.claudeCode).toEqual(expect.any(Object))
          runtime = (await prepare('acp-http', initialize)).runtime
          const token: string = runtime.env.TUTTI_CONNECTOR_TOKEN
          expect(token).toMatch(TOKEN_SHAPE)
          expect(runtime.projection).toEqual({
            kind: 'acp',
            mcpServers: [
              {
                type: 'http',
                name: 'connector',
                url: runtime.mcpServers[0].url,
                headers: [{ name: 'Authorization', value: 'Bearer ${TUTTI_CONNECTOR_TOKEN}' }],
              },
            ],
            // Claude Code's options: the token and the shims' PATH in its env, the Skills as an additional directory
            sessionMeta: {
              claudeCode: {
                options: {
                  env: { TUTTI_CONNECTOR_TOKEN: token, PATH: runtime.env.PATH },
                  additionalDirectories: [expect.stringContaining(dir)],
                },
              },
            },
            connectors: { attached: true },
          })
          expect(runtime.env.PATH.split(path.delimiter)[0]).toBe(path.join(dir, 'bin'))
          const [addDir] = runtime.projection.sessionMeta.claudeCode.options.additionalDirectories
          expect(fs.existsSync(path.join(addDir, '.claude', 'skills', 'alpha-workflow', 'SKILL.md'))).toBe(true)
          expect(JSON.stringify(runtime.projection.mcpServers)).not.toMatch(TOKEN_SHAPE)
          expect(runtime.mcpServers[0].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/connector$/)
          // a second session of the same workspace that no agent is given: its count must stay 0
          await prepare('acp-bystander', initialize)
          expect(await activityOf('acp-http')).toMatchObject({ requests: 0 })
        },
      )

      it(
        "session/new with the prepared mcpServers and sessionMeta as _meta: the daemon sees the agent's MCP requests " +
          "arrive with this session's token, and no other",
        async () => {
          const session = await started.agent.request('session/new', {
            cwd: workspace,
            mcpServers: runtime.projection.mcpServers,
            _meta: runtime.projection.sessionMeta,
          })
          sessionId = session.sessionId
          expect(sessionId).toEqual(expect.any(String))
          // Claude Code connects to its MCP servers as the session starts (initialize, tools/list …)
          const seen = await eventually(
            () => activityOf('acp-http'),
            (a) => (a?.requests ?? 0) > 0,
          )
          expect(seen?.requests).toBeGreaterThan(0)
          expect(Date.parse(seen!.lastSeenAt!)).not.toBeNaN()
          expect(await activityOf('acp-bystander')).toMatchObject({ requests: 0 })
        },
      )

      it(
        'session/prompt: the model calls a connector tool, the call reaches the upstream through the daemon with ' +
          "this session's token, and its answer is in the model's next request",
        async () => {
          const before = (await activityOf('acp-http'))!.requests
          const entity = `acp-proof-${randomBytes(4).toString('hex')}`
          const callId = 'toolu_acp_create_entities'
          const prompt = started.agent.request('session/prompt', {
            sessionId,
            prompt: [{ type: 'text', text: 'Note the proof in the alpha graph.' }],
          })

          const first = await fake.next()
          expect(
            toolNames(first.request)
              .filter((n) => n.startsWith('mcp__connector__'))
              .sort(),
          ).toEqual(CONNECTOR_TOOLS)
          // the connector Skill, from the additional directory sessionMeta named, listed as Claude Code lists Skills
          expect(toolNames(first.request)).toContain('Skill')
          expect(promptText(first.request)).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
          first.reply({
            toolUse: {
              id: callId,
              name: 'mcp__connector__alpha_create_entities',
              input: { entities: [{ name: entity, entityType: 'proof', observations: ['made through ACP'] }] },
            },
          })

          const next = await fake.next()
          const result = toolResults(next.request).find((r) => r.tool_use_id === callId)
          expect(result, JSON.stringify(toolResults(next.request))).toBeDefined()
          expect(result!.is_error).not.toBe(true)
          expect(JSON.stringify(result!.content)).toContain(entity)
          next.reply({ text: 'Noted.' })
          expect(await prompt).toMatchObject({ stopReason: 'end_turn' })

          // the editor was asked, as ACP has it, and allowed the call
          expect(started.agent.permissions).toEqual([
            expect.objectContaining({
              sessionId,
              chose: 'allow',
              toolCall: expect.objectContaining({ toolCallId: callId }),
            }),
          ])
          // the upstream (the npm memory server the daemon runs) stored what the model sent
          expect(filesContaining(dir, entity).filter((f) => f.endsWith('memory.jsonl'))).toHaveLength(1)
          // and the daemon counted the call for this session's token alone
          expect((await activityOf('acp-http'))!.requests).toBeGreaterThan(before)
          expect(await activityOf('acp-bystander')).toMatchObject({ requests: 0 })
        },
      )

      it(
        "session/prompt: the model runs the beta connector's CLI by its shim name with Claude Code's Bash tool, " +
          'found on the PATH sessionMeta gave, and sees its output',
        async () => {
          const callId = 'toolu_acp_shim'
          const prompt = started.agent.request('session/prompt', {
            sessionId,
            prompt: [{ type: 'text', text: 'What does the beta CLI report?' }],
          })
          const first = await fake.next()
          expect(toolNames(first.request)).toContain('Bash')
          first.reply({
            toolUse: {
              id: callId,
              name: 'Bash',
              input: { command: 'tutti-connector-beta acp-arg', description: 'run the beta CLI' },
            },
          })
          const next = await fake.next()
          const result = toolResults(next.request).find((r) => r.tool_use_id === callId)
          expect(result, JSON.stringify(toolResults(next.request))).toBeDefined()
          expect(result!.is_error).not.toBe(true)
          // the probe's report: the release it belongs to, and the argument it was given
          const output = JSON.stringify(result!.content)
          expect(output).toContain('beta-through-acp')
          expect(output).toContain('acp-arg')
          next.reply({ text: 'It reports its release.' })
          expect(await prompt).toMatchObject({ stopReason: 'end_turn' })
        },
      )

      it(
        "no token in the model's requests, any ACP message but the session/new tutti told the host to send, the " +
          "agent's stderr, or any file the agent or tutti wrote (daemon.log, sessions.json included)",
        () => {
          for (const req of fake.requests) expect(JSON.stringify(req)).not.toMatch(TOKEN_SHAPE)
          const carrying = started.agent.transcript
            .filter((m) => TOKEN_SHAPE.test(m.line))
            .map((m) => ({ from: m.from, method: JSON.parse(m.line).method }))
          expect(carrying).toEqual([{ from: 'client', method: 'session/new' }])
          expect(started.agent.stderr.join('')).not.toMatch(TOKEN_SHAPE)
          expect(filesContaining(started.home, TOKEN_SHAPE)).toEqual([])
          expect(filesContaining(workspace, TOKEN_SHAPE)).toEqual([])
          expect(filesContaining(path.dirname(started.probeFile), TOKEN_SHAPE)).toEqual([])
          expect(filesContaining(dir, TOKEN_SHAPE)).toEqual([])
        },
      )

      it('argv: no token in the argv the agent started Claude Code with, nor anywhere in the running tree', () => {
        const argv = treeArgv(started.agent.pid)
        expect(argv.some((a) => a.includes('claude-agent-acp'))).toBe(true)
        // Claude Code below it, under the title it gave itself
        expect(argv.some((a) => /^claude\s*$/.test(a))).toBe(true)
        for (const a of argv) expect(a).not.toMatch(TOKEN_SHAPE)
        // the one Claude Code process of the session went through the probe: the argv it was started with. The SDK
        // puts the session's MCP servers, headers and all, in `--mcp-config <json>`; with the header naming
        // ${TUTTI_CONNECTOR_TOKEN} (expanded by Claude Code from the env sessionMeta gave it) that holds no token
        const starts = probed(started.probeFile)
        expect(starts).toHaveLength(1)
        expect(starts[0]!.argc).toBeGreaterThan(10)
        expect(starts[0]!.matches).toEqual([])
      })

      it(
        'session/close ends the Claude Code process that held the token, ' +
          'and the agent exits at the end of its input',
        async () => {
          await closesCleanly(started)
        },
      )
    },
  )

  /** The editor is done: the session's Claude Code ends with its session/close, the agent at the end of its input. */
  async function closesCleanly(started: StartedAgent): Promise<void> {
    const [claudeCode] = probed(started.probeFile)
    expect(claudeCode && isAlive(claudeCode.pid)).toBe(true)
    expect(started.agent.openSessions.size).toBe(1)
    await started.agent.stop()
    expect(started.agent.exit).toEqual({ code: 0, signal: null })
    expect(await until(() => !isAlive(claudeCode!.pid))).toBe(true)
  }

  describe('an agent whose initialize lacks mcpCapabilities.http: a plain session', () => {
    let started: StartedAgent
    let initialize: { result: any }
    beforeAll(async () => {
      started = startAgent()
      initialize = await started.agent.initialize()
    })
    afterAll(async () => {
      await started?.agent.stop()
    })

    it(
      'the real response without the flag gives no servers, no env, no token and no session in the daemon; the ' +
        'agent session starts and its model sees no connector tool',
      async () => {
        const withoutHttp = structuredClone(initialize)
        delete withoutHttp.result.agentCapabilities.mcpCapabilities.http
        expect(withoutHttp.result.agentCapabilities.mcpCapabilities).toEqual({ sse: true })
        const sessionsBefore = (await status()).sessions

        const { runtime, stdout } = await prepare('acp-plain', withoutHttp)
        expect(stdout).not.toMatch(TOKEN_SHAPE)
        expect(runtime).toMatchObject({ env: {}, mcpServers: [], skillRoots: [], prompt: '' })
        expect(runtime.projection).toEqual({
          kind: 'acp',
          mcpServers: [],
          connectors: { attached: false, reason: 'the agent does not declare mcpCapabilities.http' },
        })
        expect((await status()).sessions).toBe(sessionsBefore)
        expect(await activityOf('acp-plain')).toBeUndefined()

        const { sessionId } = await started.agent.request('session/new', {
          cwd: workspace,
          mcpServers: runtime.projection.mcpServers,
        })
        expect(sessionId).toEqual(expect.any(String))
        const prompt = started.agent.request('session/prompt', {
          sessionId,
          prompt: [{ type: 'text', text: 'What can you do here?' }],
        })
        const first = await fake.next()
        expect(toolNames(first.request).length).toBeGreaterThan(0)
        expect(toolNames(first.request).filter((n) => n.startsWith('mcp__'))).toEqual([])
        first.reply({ text: 'Plain work.' })
        expect(await prompt).toMatchObject({ stopReason: 'end_turn' })
        // nothing of a token to leak: Claude Code was started without an MCP server, no message carried one
        expect(probed(started.probeFile)).toEqual([expect.objectContaining({ matches: [] })])
        expect(started.agent.transcript.filter((m) => TOKEN_SHAPE.test(m.line))).toEqual([])
        await closesCleanly(started)
      },
    )
  })
})
