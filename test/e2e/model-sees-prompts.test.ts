import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime, type ClaudeProjection } from 'tutti'
import { CLAUDE_OFFLINE, claudeBinary } from '../support/agents.js'
import { startFakeAnthropic, toolsOf, type FakeAnthropic } from '../support/fake-model-api/anthropic.js'
import { requestText } from '../support/fake-model-api/server.js'
import { connected, installed } from '../support/in-process.js'
import { cleanupState, EXAMPLES, tempStateDir } from '../support/tutti.js'

/**
 * A connector's prompt as the real Claude Code uses it (issue 24, must hold): Claude Code offers an MCP
 * server's prompts as slash commands, `/mcp__<server>__<prompt> <arguments>`. Through tutti the prompt is
 * `everything_args-prompt` of the `connector` server; Claude Code gets its text with prompts/get, and the
 * text of the real server-everything's prompt is in the next model request.
 */
describe('a connector prompt as a Claude Code slash command', () => {
  let dir: string
  let home: string
  let fake: FakeAnthropic
  beforeAll(async () => {
    dir = tempStateDir('model-sees-prompts')
    home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-prompts-home-')))
    fake = await startFakeAnthropic()
    fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: 'prompts-key' } })
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    fs.rmSync(home, { recursive: true, force: true })
  })

  it('/mcp__connector__everything_args-prompt Lisbon: the server’s text for Lisbon reaches the model', async () => {
    const runtime = await prepareRuntime({ provider: 'claude', workspace: home, session: 'prompts', stateDir: dir })
    const env = {
      ...process.env,
      ...runtime.env,
      HOME: home,
      ...CLAUDE_OFFLINE,
      ANTHROPIC_BASE_URL: fake.origin,
      ANTHROPIC_API_KEY: 'sk-ant-fake-prompts',
    }
    const args = [
      ...(runtime.projection as ClaudeProjection).args,
      '-p',
      '/mcp__connector__everything_args-prompt Lisbon',
    ]
    const child = spawn(claudeBinary(), args, { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const next = await fake.next()
    next.reply({ text: 'It is sunny.' })
    // server-everything's args-prompt: "What's weather in <city>?"
    expect(requestText(next.request), stderr.slice(-2000)).toContain("What's weather in Lisbon?")
    expect(await exited, stderr.slice(-2000)).toBe(0)
  })
})
