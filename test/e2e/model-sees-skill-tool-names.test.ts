import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRuntime, type ClaudeProjection, type CodexProjection } from 'tutti'
import { CLAUDE_OFFLINE, claudeBinary, codexBinary } from '../support/agents.js'
import { ClaudeStream, STREAM_FLAGS } from '../support/claude-stream.js'
import { promptText, startFakeAnthropic, toolResults, toolsOf } from '../support/fake-model-api/anthropic.js'
import type { FakeAnthropic } from '../support/fake-model-api/anthropic.js'
import { inputText, namespaceFunctions, startFakeOpenAI, type FakeOpenAI } from '../support/fake-model-api/openai.js'
import { installed } from '../support/in-process.js'
import { linearPlugin, TRIAGE_MAPPING } from '../support/skill-plugin.js'
import { cleanupState, tempStateDir } from '../support/tutti.js'

const SEARCH = 'mcp__connector__linear_search_issues'
const NOTE_HEADING = '## Tool names in this session'

/**
 * What the model is sent when it uses a plugin's Skill that names tools by
 * their upstream names: the real Claude Code, started with the prepared
 * projection, against a fake Anthropic API on loopback that records each
 * request and answers as scripted. The model asks for the Skill, and the
 * Skill's text it is then sent carries the note mapping `search_issues` to
 * the tool it is given, which it calls by that name.
 */
describe('what the model is sent of a Skill that names upstream tools (Claude Code)', () => {
  let dir: string
  let plugin: string
  let workspace: string
  let home: string
  let fake: FakeAnthropic
  let claude: ClaudeStream
  beforeAll(async () => {
    dir = tempStateDir('model-sees-skill-names')
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-skill-names-ws-'))
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-skill-names-home-'))
    plugin = linearPlugin()
    fake = await startFakeAnthropic()
    // side requests that carry no tools are answered without the test
    fake.autoReply = (req) => (toolsOf(req).length === 0 ? { text: 'ok' } : undefined)
    await installed(dir, plugin)
    const runtime = await prepareRuntime({ provider: 'claude', workspace, session: 'skill-names', stateDir: dir })
    const projection = runtime.projection as ClaudeProjection
    const env = {
      PATH: runtime.env.PATH,
      TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN,
      HOME: home,
      ...CLAUDE_OFFLINE,
      ANTHROPIC_BASE_URL: fake.origin,
      ANTHROPIC_API_KEY: 'sk-ant-fake-skill-names',
      ENABLE_TOOL_SEARCH: 'false',
    }
    const allowed = ['--allowedTools', `Skill ${SEARCH}`]
    const args = [...STREAM_FLAGS, '--strict-mcp-config', ...allowed, ...projection.args]
    claude = await ClaudeStream.start(claudeBinary(), args, { env, cwd: workspace })
  })
  afterAll(async () => {
    await claude?.stop()
    await fake?.close()
    await cleanupState(dir)
    for (const d of [workspace, home, plugin]) if (d) fs.rmSync(d, { recursive: true, force: true })
  })

  it('the Skill the model asks for comes with the mapping, and the mapped name is a tool it calls', async () => {
    claude.send('Triage the login bug.')
    const first = await fake.next()
    expect(promptText(first.request)).toContain('linear-triage: Triage Linear issues for the user')
    expect(toolsOf(first.request).map((t) => t.name)).toContain(SEARCH)
    const skillTool = toolsOf(first.request).find((t) => t.name === 'Skill')
    expect(Object.keys((skillTool?.input_schema?.properties ?? {}) as object)).toContain('skill')
    first.reply({ toolUse: { id: 'toolu_skill', name: 'Skill', input: { skill: 'linear-triage' } } })

    const second = await fake.next()
    const sent = promptText(second.request)
    // the Skill's own words, then the note, in what the model is sent
    expect(sent).toContain("Call `search_issues` with the user's words.")
    expect(sent).toContain(NOTE_HEADING)
    for (const line of TRIAGE_MAPPING) expect(sent).toContain(line)
    second.reply({ toolUse: { id: 'toolu_search', name: SEARCH, input: {} } })

    const third = await fake.next()
    const result = toolResults(third.request).find((r) => r.tool_use_id === 'toolu_search')
    expect(result?.is_error).not.toBe(true)
    expect(JSON.stringify(result?.content)).toContain('called search_issues')
    third.reply({ text: 'Triaged.' })
    expect(await claude.nextResult()).toMatchObject({ subtype: 'success', is_error: false })
  })
})

/**
 * The same with the real Codex (`codex exec`) against a fake Responses API:
 * Codex lists the Skill by its plugin-qualified name and a short path; the
 * scripted model reads the file as Codex's models do (a shell command) and
 * is sent the note, then calls the mapped tool in the `mcp__connector`
 * namespace.
 */
describe('what the model is sent of a Skill that names upstream tools (Codex)', () => {
  let dir: string
  let plugin: string
  let workspace: string
  let home: string
  let fake: FakeOpenAI
  beforeAll(async () => {
    dir = tempStateDir('model-sees-skill-names-codex')
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-skill-names-ws-'))
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-skill-names-home-'))
    plugin = linearPlugin()
    fake = await startFakeOpenAI()
    fs.mkdirSync(path.join(home, '.codex'))
    const config = ['model = "gpt-fake-skill-names"', 'model_provider = "fake"', '', '[model_providers.fake]']
    config.push('name = "fake Responses API"', `base_url = "${fake.origin}/v1"`, 'wire_api = "responses"')
    config.push('env_key = "TUTTI_FAKE_OPENAI_KEY"', '')
    fs.writeFileSync(path.join(home, '.codex', 'config.toml'), config.join('\n'))
    await installed(dir, plugin)
  })
  afterAll(async () => {
    await fake?.close()
    await cleanupState(dir)
    for (const d of [workspace, home, plugin]) if (d) fs.rmSync(d, { recursive: true, force: true })
  })

  it('the Skill keeps its Codex name, the file the model reads has the mapping, and the mapped tool runs', async () => {
    const userEnv = { ...process.env, HOME: home, CODEX_HOME: '' }
    const prepare = { provider: 'codex' as const, workspace, session: 'codex', stateDir: dir, env: userEnv }
    const runtime = await prepareRuntime(prepare)
    const env = {
      PATH: runtime.env.PATH,
      HOME: home,
      CODEX_HOME: (runtime.projection as CodexProjection).codexHome,
      TUTTI_CONNECTOR_TOKEN: runtime.env.TUTTI_CONNECTOR_TOKEN,
      TUTTI_FAKE_OPENAI_KEY: 'sk-fake-skill-names',
      RUST_LOG: 'warn',
    }
    // the scripted model runs one shell command of its own: no sandbox is needed for it
    const args = ['exec', '--skip-git-repo-check', '--disable', 'plugins', '-s', 'danger-full-access']
    const options = { env, cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] }
    const child = spawn(codexBinary(), [...args, '-C', workspace, 'Triage the login bug.'], options)
    const stderr: string[] = []
    child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))

    const first = await fake.next()
    const listed = inputText(first.request)
    // named after the plugin manifest above it, as when the Skill is linked as it is
    const entry = /- linear:linear-triage: Triage Linear issues for the user \(file: (r\d+)\/linear-triage\/SKILL\.md\)/
    const alias = entry.exec(listed)?.[1]
    expect(alias, stderr.join('').slice(-2000)).toBeDefined()
    const root = new RegExp(`- \`${alias}\` = \`([^\`]+)\``).exec(listed)?.[1]
    expect(namespaceFunctions(first.request, 'mcp__connector')).toContain('linear_search_issues')
    const cmd = `cat '${path.join(root!, 'linear-triage', 'SKILL.md')}'`
    first.reply({ functionCall: { callId: 'call_read_skill', name: 'exec_command', arguments: { cmd } } })

    const second = await fake.next()
    const sent = JSON.stringify(second.request.body)
    expect(sent).toContain('call_read_skill')
    expect(sent).toContain(NOTE_HEADING)
    for (const line of TRIAGE_MAPPING) expect(sent).toContain(JSON.stringify(line).slice(1, -1))
    const search = { callId: 'call_search', name: 'linear_search_issues', namespace: 'mcp__connector', arguments: {} }
    second.reply({ functionCall: search })

    const third = await fake.next()
    expect(JSON.stringify(third.request.body)).toContain('called search_issues')
    third.reply({ text: 'Triaged.' })
    expect(await exited, stderr.join('').slice(-2000)).toBe(0)
  })
})
