import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { MCPServerBinding } from '../../src/runtime/sessions/prepared-runtime.js'
import { acpSupportsHttp, projectAcp, takesClaudeSdkEnv } from '../../src/runtime/sessions/projections/acp.js'

/**
 * The ACP projection: which agents get the token in `sessionMeta` (Claude
 * Code's env, through the Claude Agent SDK's options) with a header that
 * only names the variable, and which get the literal header. The e2e test
 * (test/e2e/acp-agent.test.ts) drives the real claude-agent-acp with it.
 */

const TOKEN = 'tutti_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd'
const SERVERS: MCPServerBinding[] = [
  {
    name: 'connector',
    type: 'http',
    url: 'http://127.0.0.1:4711/mcp/connector',
    headers: { Authorization: `Bearer ${TOKEN}` },
  },
]

/** The initialize result @zed-industries/claude-agent-acp 0.23.1 gives, as recorded from the real agent. */
const CLAUDE_AGENT_ACP = {
  protocolVersion: 1,
  agentCapabilities: {
    _meta: { claudeCode: { promptQueueing: true } },
    promptCapabilities: { image: true, embeddedContext: true },
    mcpCapabilities: { http: true, sse: true },
    loadSession: true,
    sessionCapabilities: { fork: {}, list: {}, resume: {}, close: {} },
  },
  agentInfo: { name: '@zed-industries/claude-agent-acp', title: 'Claude Agent', version: '0.23.1' },
  authMethods: [],
}

/** An initialize like codex-acp's: HTTP MCP servers, no Claude Agent SDK underneath. */
const CODEX_ACP_LIKE = {
  protocolVersion: 1,
  agentCapabilities: {
    promptCapabilities: { image: true, embeddedContext: true },
    mcpCapabilities: { http: true, sse: false },
    loadSession: true,
  },
  agentInfo: { name: 'codex-acp', title: 'Codex', version: '0.9.0' },
  authMethods: [{ id: 'openai-api-key', name: 'Use OPENAI_API_KEY' }],
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-acp-unit-'))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

/** One connector Skill in a release, and a fresh session dir, as the daemon and prepareRuntime hand them over. */
function sessionContext(init: unknown) {
  const release = fs.mkdtempSync(path.join(scratch, 'release-'))
  const skillDir = path.join(release, 'skills', 'alpha-workflow')
  fs.mkdirSync(skillDir, { recursive: true })
  fs.writeFileSync(path.join(skillDir, 'SKILL.md'), '---\nname: alpha-workflow\ndescription: d\n---\n')
  const sessionDir = fs.mkdtempSync(path.join(scratch, 'session-'))
  const skillRoots = [
    { connector: 'alpha', dir: path.join(release, 'skills'), skills: [{ name: 'alpha-workflow', dir: skillDir }] },
  ]
  return { token: TOKEN, initializeResponse: init, path: '/state/bin:/usr/bin', skillRoots, sessionDir, skillDir }
}

const LITERAL = [
  {
    type: 'http',
    name: 'connector',
    url: SERVERS[0]!.url,
    headers: [{ name: 'Authorization', value: `Bearer ${TOKEN}` }],
  },
]
const PLACEHOLDER = [
  {
    type: 'http',
    name: 'connector',
    url: SERVERS[0]!.url,
    headers: [{ name: 'Authorization', value: 'Bearer ${TUTTI_CONNECTOR_TOKEN}' }],
  },
]

describe('ACP projection', () => {
  it(
    'a Claude Agent SDK agent (the real claude-agent-acp initialize): the header names the variable, the token, ' +
      'PATH and the Skills in sessionMeta',
    async () => {
      expect(acpSupportsHttp(CLAUDE_AGENT_ACP)).toEqual({ ok: true })
      const context = sessionContext(CLAUDE_AGENT_ACP)
      const p = await projectAcp(SERVERS, context)
      const addDir = path.join(context.sessionDir, 'acp', 'add-dir')
      expect(p).toEqual({
        kind: 'acp',
        mcpServers: PLACEHOLDER,
        sessionMeta: {
          claudeCode: {
            options: {
              env: { TUTTI_CONNECTOR_TOKEN: TOKEN, PATH: '/state/bin:/usr/bin' },
              additionalDirectories: [addDir],
            },
          },
        },
        connectors: { attached: true },
      })
      // the additional directory holds the Skills where Claude Code scans one: .claude/skills/<name>/SKILL.md
      expect(fs.realpathSync(path.join(addDir, '.claude', 'skills', 'alpha-workflow'))).toBe(
        fs.realpathSync(context.skillDir),
      )
      expect(fs.existsSync(path.join(addDir, '.claude', 'skills', 'alpha-workflow', 'SKILL.md'))).toBe(true)
      // what the SDK would put on Claude Code's command line holds no token
      expect(JSON.stringify(p.mcpServers)).not.toContain(TOKEN)
      // the caller's bindings are left as they are (they are the runtime's authoritative list)
      expect(SERVERS[0]!.headers.Authorization).toBe(`Bearer ${TOKEN}`)
    },
  )

  it('the whole JSON-RPC response is read like the bare result', async () => {
    const p = await projectAcp(SERVERS, sessionContext({ jsonrpc: '2.0', id: 1, result: CLAUDE_AGENT_ACP }))
    expect(p.mcpServers).toEqual(PLACEHOLDER)
    expect(p.sessionMeta?.claudeCode.options.env).toEqual({ TUTTI_CONNECTOR_TOKEN: TOKEN, PATH: '/state/bin:/usr/bin' })
  })

  it('another ACP agent (codex-acp-like): the literal header, no sessionMeta, nothing written', async () => {
    expect(acpSupportsHttp(CODEX_ACP_LIKE)).toEqual({ ok: true })
    const context = sessionContext(CODEX_ACP_LIKE)
    const p = await projectAcp(SERVERS, context)
    expect(p).toEqual({ kind: 'acp', mcpServers: LITERAL, connectors: { attached: true } })
    expect('sessionMeta' in p).toBe(false)
    expect(fs.readdirSync(context.sessionDir)).toEqual([])
  })

  it.each([
    [
      'declares the claudeCode namespace, any name',
      { agentCapabilities: { _meta: { claudeCode: {} } }, agentInfo: { name: 'some-fork' } },
      true,
    ],
    [
      'a known Claude SDK adapter by name, no namespace declared',
      { agentCapabilities: {}, agentInfo: { name: '@zed-industries/claude-code-acp' } },
      true,
    ],
    ['claudeCode declared as a non-object', { agentCapabilities: { _meta: { claudeCode: true } } }, false],
    ['claudeCode null', { agentCapabilities: { _meta: { claudeCode: null } } }, false],
    ['another namespace only', { agentCapabilities: { _meta: { zed: {} } }, agentInfo: { name: 'gemini-cli' } }, false],
    ['agentInfo.name not a string', { agentInfo: { name: 42 } }, false],
    ['not an object', 'claude-agent-acp', false],
    ['absent', undefined, false],
  ])('recognising a Claude SDK agent: %s', (_label, init, expected) => {
    expect(takesClaudeSdkEnv(init)).toBe(expected)
  })
})
