import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLAUDE_OFFLINE, claudeBinary } from '../support/agents.js'
import { ClaudeStream, STREAM_FLAGS } from '../support/claude-stream.js'
import { killDaemonProven } from '../support/daemon-kill.js'
import { until } from '../support/eventually.js'
import {
  startFakeAnthropic,
  toolNames,
  toolResults,
  toolsOf,
  type FakeAnthropic,
} from '../support/fake-model-api/anthropic.js'
import { memoryConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { BIN, cleanupState, readDaemonJson, tempStateDir } from '../support/tutti.js'

const CREATE = 'mcp__connector__mem_create_entities'
const READ = 'mcp__connector__mem_read_graph'
const FACT = 'wrote the first program, for the Analytical Engine'

/**
 * Issue 23, item 6: a real Claude Code session run by `tutti session exec`
 * against the fake Anthropic API loses its daemon to a kill -9 between two
 * tool calls. exec's watch starts the daemon again, on the same port, and
 * the same token (persisted as a hash) works there: the model's next call
 * reads back what its call before the kill wrote.
 */
describe('an exec’d Claude Code session survives a kill -9 of its daemon', () => {
  let dir: string
  let workspace: string
  let home: string
  let fake: FakeAnthropic
  let claude: ClaudeStream

  beforeAll(async () => {
    dir = tempStateDir('survives-daemon')
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-survives-ws-'))
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-survives-home-'))
    fake = await startFakeAnthropic()
    // side requests of Claude Code that carry no tools are answered without the test
    fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    await installed(dir, memoryConnector('mem'))
    const env = {
      PATH: process.env.PATH,
      TUTTI_STATE_DIR: dir,
      HOME: home,
      ...CLAUDE_OFFLINE,
      ANTHROPIC_BASE_URL: fake.origin,
      ANTHROPIC_API_KEY: 'sk-ant-fake-survives',
      // tool search off: the tools are in every model request, as the model gets them
      ENABLE_TOOL_SEARCH: 'false',
    }
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
        'survivor',
        '--',
        claudeBinary(),
        ...STREAM_FLAGS,
        '--strict-mcp-config',
        '--allowedTools',
        `${CREATE},${READ}`,
      ],
      { env, cwd: workspace },
    )
  })
  afterAll(async () => {
    try {
      await claude?.stop()
      await fake?.close()
      await cleanupState(dir)
    } finally {
      for (const d of [workspace, home]) if (d) fs.rmSync(d, { recursive: true, force: true })
    }
  })

  const sessionHashes = (): string[] =>
    Object.entries(JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).sessions)
      .filter(([, r]) => (r as { session: string }).session === 'survivor')
      .map(([hash]) => hash)

  /** The model calls `name`; resolves with the tool_result Claude Code sends back in the turn's next request. */
  async function callTool(id: string, name: string, input: Record<string, unknown>) {
    const asked = await fake.next()
    expect(toolNames(asked.request)).toContain(name)
    asked.reply({ toolUse: { id, name, input } })
    const next = await fake.next()
    const result = toolResults(next.request).find((r) => r.tool_use_id === id)
    next.reply({ text: 'Done.' })
    expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
    return result
  }

  it('the model’s tool call after the kill succeeds and reads back what its call before the kill wrote', async () => {
    claude.send('Remember what Ada Lovelace did.')
    const created = await callTool('toolu_survives_create', CREATE, {
      entities: [{ name: 'Ada Lovelace', entityType: 'person', observations: [FACT] }],
    })
    expect(created?.is_error).not.toBe(true)
    expect(JSON.stringify(created?.content)).toContain('Ada Lovelace')
    const token = sessionHashes()
    expect(token).toHaveLength(1)

    const before = readDaemonJson(dir)!
    const killed = await killDaemonProven(dir)
    // no tutti command runs here: only exec's watch can start the daemon again
    expect(await until(() => (readDaemonJson(dir)?.pid ?? killed) !== killed)).toBe(true)
    expect(readDaemonJson(dir)!.port).toBe(before.port)

    claude.send('What do you remember about Ada?')
    const read = await callTool('toolu_survives_read', READ, {})
    expect(read).toBeDefined()
    expect(read!.is_error).not.toBe(true)
    expect(JSON.stringify(read!.content)).toContain(FACT)
    // the agent's own token, issued before the kill, is what the new daemon honoured
    expect(sessionHashes()).toEqual(token)
    expect(claude.exited).toBe(false)
  })
})
