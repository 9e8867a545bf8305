import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { run as runProgram } from '../support/package-install.js'
import { prepareRuntime, type ClaudeProjection } from 'tutti'
import { CLAUDE_OFFLINE, claudeBinary } from '../support/agents.js'
import { ClaudeStream, STREAM_FLAGS, type McpServerStatus } from '../support/claude-stream.js'
import { eventually } from '../support/eventually.js'
import { modernClient } from '../support/mcp-clients.js'
import {
  promptText,
  startFakeAnthropic,
  toolNames,
  toolResults,
  toolsOf,
  type FakeAnthropic,
} from '../support/fake-model-api/anthropic.js'
import type { RecordedRequest } from '../support/fake-model-api/server.js'
import { installed } from '../support/in-process.js'
import {
  cliHas,
  filesContaining,
  MEMORY_TOOLS,
  seenConnector,
  skillDescription,
  treeArgv,
} from '../support/model-sees.js'
import { BIN, cleanupState, tempStateDir } from '../support/tutti.js'

/**
 * What the model is given when Claude Code (@anthropic-ai/claude-code from
 * npm) runs with tutti: the real binary against a fake Anthropic API on
 * loopback that records every request and answers as the test scripts it.
 * One long stream-json session per way of starting Claude Code (the
 * prepared projection, `tutti session exec`, a static `tutti session bridge`
 * config); each is asked at start (tools and Skills in the first model
 * request) and mid-session (a connector installed while a model request is
 * held open is in the tools of the next request of the same turn).
 */

const TOKEN_SHAPE = /tutti_[A-Za-z0-9_-]{43}/
const mcpTools = (req: RecordedRequest, key: string) =>
  toolNames(req).filter((n) => n.startsWith(`mcp__connector__${key}_`))
const connectorTools = (status: McpServerStatus[]) => status.find((s) => s.name === 'connector')?.tools ?? []
/** Tool search off: every MCP tool goes into the request's tools with its schema, as the model gets it. */
const ALL_TOOLS_LOADED = { ENABLE_TOOL_SEARCH: 'false' }
const ALLOW_READ_GRAPH = ['--allowedTools', 'mcp__connector__alpha_read_graph']
const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills'
/** Claude Code's debug log, inside its HOME (whose files are checked for tokens too). */
const claudeDebugLog = (home: string) => path.join(home, 'claude-debug.log')

const run = (file: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }) =>
  runProgram(file, args, { ...options, timeout: 90_000 })

describe('what the model sees from Claude Code', () => {
  let dir: string
  let workspace: string
  let fake: FakeAnthropic
  const homes: string[] = []
  beforeAll(async () => {
    dir = tempStateDir('model-sees-claude')
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-claude-ws-'))
    fake = await startFakeAnthropic()
    // side requests of Claude Code that carry no tools (none are expected) are answered without the test
    fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    await installed(dir, seenConnector('alpha'))
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    for (const d of [workspace, ...homes]) if (d) fs.rmSync(d, { recursive: true, force: true })
  })

  /** An isolated HOME per session: what Claude Code writes there is checked for the token. */
  const newHome = (): string => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-claude-home-'))
    homes.push(home)
    return home
  }
  /**
   * Whether the connector server serves Skills over MCP (the SEP-2640 extension, issue 13 item 5): asked of the server
   * itself.
   */
  const serverHasSkillsExtension = async (): Promise<boolean> => {
    const probe = await prepareRuntime({ provider: 'tutti-agent', workspace, session: 'skills-probe', stateDir: dir })
    const client = await modernClient(probe.mcpServers[0]!)
    try {
      const capabilities = client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined
      return Boolean(capabilities?.extensions?.[SKILLS_EXTENSION])
    } finally {
      await client.close()
    }
  }
  const modelEnv = (home: string): NodeJS.ProcessEnv => ({
    HOME: home,
    ...CLAUDE_OFFLINE,
    ANTHROPIC_BASE_URL: fake.origin,
    ANTHROPIC_API_KEY: 'sk-ant-fake-model-sees',
  })

  /**
   * The checks every way of starting Claude Code must pass: `start()` gives
   * the running session, `added` is a connector key installed mid-session.
   */
  function whatTheModelSees(
    started: () => { claude: ClaudeStream; home: string },
    added: string,
    skills: 'skill roots' | 'mcp' = 'skill roots',
  ): void {
    afterEach(async () => {
      // a test that failed while a model request was held: the turn is let finish, so the next test has its own
      if (fake.answerUnanswered({ text: 'abandoned by a failed test' }) > 0)
        await started()
          .claude.nextResult()
          .catch(() => undefined)
    })

    it(
      `at start: the first model request has every mcp__connector__alpha_* tool with the server's ` +
        `schema${skills === 'skill roots' ? ", and the alpha Skill's name and description" : ''}`,
      async () => {
        const { claude } = started()
        claude.send('What can you do here?')
        const first = await fake.next()
        expect(mcpTools(first.request, 'alpha').sort()).toEqual(MEMORY_TOOLS.map((t) => `mcp__connector__alpha_${t}`))
        const search = toolsOf(first.request).find((t) => t.name === 'mcp__connector__alpha_search_nodes')!
        expect(search.description).toMatch(/search/i)
        expect(search.input_schema).toMatchObject({ type: 'object', properties: { query: { type: 'string' } } })
        if (skills === 'skill roots') {
          expect(toolNames(first.request)).toContain('Skill')
          expect(promptText(first.request)).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
        }
        first.reply({ text: 'I can use the alpha graph.' })
        expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
      },
    )

    if (skills === 'mcp') {
      // a static config names no Skill root: Claude Code gets the Skills over MCP (the SEP-2640 skills extension) or
      // not at all
      it("the alpha Skill's name and description reach the model over MCP (skills extension)", async (ctx) => {
        if (!(await serverHasSkillsExtension())) ctx.skip()
        // Claude Code 2.1.332 asks an MCP server for Skills only behind a flag of its own (tengu_wiggly_crystal, off
        // without its service); its debug log says when it asked, or why it did not
        const debug = fs.readFileSync(claudeDebugLog(started().home), 'utf8')
        if (!debug.includes('skills/list')) ctx.skip()
        expect(debug).not.toMatch(/skills\/list not sent/)
        const { claude } = started()
        claude.send('Which skills do you have?')
        const next = await fake.next()
        try {
          expect(toolNames(next.request)).toContain('Skill')
          expect(promptText(next.request)).toContain(`alpha-workflow: ${skillDescription('alpha')}`)
        } finally {
          next.reply({ text: 'These.' })
        }
        expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
      })
    }

    it(
      `mid-session: a connector installed while a model request is held is in the next request of that same turn ` +
        `(Claude Code refreshes on list_changed by itself)`,
      async () => {
        const { claude } = started()
        claude.send('Look at the graph.')
        const held = await fake.next()
        expect(mcpTools(held.request, added)).toEqual([])

        await installed(dir, seenConnector(added))
        // nothing is done to the session: its own view gains the connector from the server's list_changed alone
        const status = await eventually(
          () => claude.mcpStatus(),
          (s) => connectorTools(s).includes(`${added}_read_graph`),
        )
        expect(connectorTools(status)).toEqual(expect.arrayContaining(MEMORY_TOOLS.map((t) => `${added}_${t}`)))

        const callId = `toolu_model_sees_${added}`
        held.reply({ toolUse: { id: callId, name: 'mcp__connector__alpha_read_graph', input: {} } })
        const next = await fake.next()
        // the same turn, continued after the tool call the first answer asked for, which ran
        const result = toolResults(next.request).find((r) => r.tool_use_id === callId)
        expect(result).toBeDefined()
        expect(result!.is_error).not.toBe(true)
        expect(mcpTools(next.request, added).sort()).toEqual(MEMORY_TOOLS.map((t) => `mcp__connector__${added}_${t}`))
        expect(mcpTools(next.request, 'alpha')).toHaveLength(MEMORY_TOOLS.length)
        next.reply({ text: 'The graph is empty.' })
        expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
      },
    )

    it(
      'no token reaches the model, argv (the whole process tree), or any file Claude Code or tutti wrote ' +
        '(daemon.log included)',
      () => {
        const { claude, home } = started()
        for (const req of fake.requests) expect(JSON.stringify(req)).not.toMatch(TOKEN_SHAPE)
        const argv = treeArgv(claude.pid)
        expect(argv.some((a) => a.includes('claude'))).toBe(true)
        for (const a of argv) expect(a).not.toMatch(TOKEN_SHAPE)
        expect(filesContaining(home, TOKEN_SHAPE)).toEqual([])
        expect(filesContaining(workspace, TOKEN_SHAPE)).toEqual([])
        // the state dir: the projection's files, sessions.json (hashes only), daemon.log
        expect(filesContaining(dir, TOKEN_SHAPE)).toEqual([])
      },
    )
  }

  describe('started with the prepared projection (--mcp-config, --add-dir; HTTP, 2026-07-28)', () => {
    let claude: ClaudeStream
    let projection: ClaudeProjection
    let env: NodeJS.ProcessEnv
    const home = newHome()
    beforeAll(async () => {
      const runtime = await prepareRuntime({ provider: 'claude', workspace, session: 'claude-model', stateDir: dir })
      projection = runtime.projection as ClaudeProjection
      env = {
        PATH: runtime.env.PATH,
        TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN,
        ...modelEnv(home),
        ...ALL_TOOLS_LOADED,
      }
      claude = await ClaudeStream.start(
        claudeBinary(),
        [...STREAM_FLAGS, '--strict-mcp-config', ...ALLOW_READ_GRAPH, ...projection.args],
        { env, cwd: workspace },
      )
    })
    afterAll(async () => {
      await claude?.stop()
    })

    whatTheModelSees(() => ({ claude, home }), 'beta')

    it('with tool search on (the default), the tools are announced to the model by name for ToolSearch', async () => {
      const { ENABLE_TOOL_SEARCH: _off, ...defaults } = env
      const oneShot = run(claudeBinary(), ['-p', 'hello', '--strict-mcp-config', ...projection.args], {
        env: defaults,
        cwd: workspace,
      })
      const first = await fake.next()
      expect(toolNames(first.request)).toContain('ToolSearch')
      const prompt = promptText(first.request)
      for (const t of MEMORY_TOOLS) expect(prompt).toContain(`mcp__connector__alpha_${t}`)
      expect(prompt).toContain(`- alpha-workflow: ${skillDescription('alpha')}`)
      first.reply({ text: 'hi' })
      expect((await oneShot).code).toBe(0)
    })
  })

  describe.skipIf(!cliHas('session:exec'))('started by `tutti session exec --provider claude -- claude …`', () => {
    let claude: ClaudeStream
    const home = newHome()
    beforeAll(async () => {
      const env = { PATH: process.env.PATH, TUTTI_STATE_DIR: dir, ...modelEnv(home), ...ALL_TOOLS_LOADED }
      claude = await ClaudeStream.start(
        process.execPath,
        [
          BIN,
          'session',
          'exec',
          '--provider',
          'claude',
          '--workspace',
          workspace,
          '--session',
          'claude-exec',
          '--',
          claudeBinary(),
          ...STREAM_FLAGS,
          '--strict-mcp-config',
          ...ALLOW_READ_GRAPH,
        ],
        { env, cwd: workspace },
      )
    })
    afterAll(async () => {
      await claude?.stop()
    })

    whatTheModelSees(() => ({ claude, home }), 'gamma')
  })

  describe.skipIf(!cliHas('session:bridge'))(
    'started with a static `claude mcp add connector -- tutti session bridge` config',
    () => {
      let claude: ClaudeStream
      const home = newHome()
      beforeAll(async () => {
        // `tutti` on PATH, as an installed tutti is; the user config holds the one static line
        const bin = path.join(home, 'bin')
        fs.mkdirSync(bin)
        fs.writeFileSync(path.join(bin, 'tutti'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, {
          mode: 0o755,
        })
        const env = {
          PATH: `${bin}${path.delimiter}${process.env.PATH}`,
          TUTTI_STATE_DIR: dir,
          ...modelEnv(home),
          ...ALL_TOOLS_LOADED,
        }
        const add = await run(
          claudeBinary(),
          ['mcp', 'add', '-s', 'user', 'connector', '--', 'tutti', 'session', 'bridge'],
          { env, cwd: workspace },
        )
        expect(add.code, add.stderr).toBe(0)
        claude = await ClaudeStream.start(
          claudeBinary(),
          [...STREAM_FLAGS, ...ALLOW_READ_GRAPH, '--debug-file', claudeDebugLog(home)],
          { env, cwd: workspace },
        )
      })
      afterAll(async () => {
        await claude?.stop()
      })

      whatTheModelSees(() => ({ claude, home }), 'delta', 'mcp')
    },
  )
})
