import path from 'node:path'
import { linkSkills, type SkillRootWithSkills } from '../session-dir.js'
import { TOKEN_ENV, type AcpProjection, type MCPServerBinding } from '../prepared-runtime.js'

/** What tutti reads of an ACP initialize result; every field may be absent or of any type. */
interface InitializeResult {
  agentCapabilities?: { mcpCapabilities?: { http?: unknown }; _meta?: { claudeCode?: unknown } }
  agentInfo?: { name?: unknown }
}

/** An initialize response, as a host hands it over: the bare result or the whole JSON-RPC response. */
function initializeResult(initializeResponse: unknown): InitializeResult | undefined {
  const root = initializeResponse as { result?: unknown } | undefined
  const result = root && typeof root === 'object' && 'result' in root ? root.result : root
  return result && typeof result === 'object' ? (result as InitializeResult) : undefined
}

/**
 * ACP agents take MCP servers in `session/new` / `session/load`. Only an
 * agent whose initialize response declares
 * `agentCapabilities.mcpCapabilities.http === true` gets the connector
 * server; anything else (false, missing, unreadable) gets a plain session.
 */
export function acpSupportsHttp(initializeResponse: unknown): { ok: true } | { ok: false; reason: string } {
  const result = initializeResult(initializeResponse)
  if (!result) return { ok: false, reason: 'the agent initialize response is missing or not an object' }
  const http = result.agentCapabilities?.mcpCapabilities?.http
  if (http === true) return { ok: true }
  return {
    ok: false,
    reason:
      http === false
        ? 'the agent declares mcpCapabilities.http = false'
        : 'the agent does not declare mcpCapabilities.http',
  }
}

/** The ACP adapters around the Claude Agent SDK, by the name their initialize gives (`agentInfo.name`). */
const CLAUDE_SDK_AGENTS = new Set(['@zed-industries/claude-agent-acp', '@zed-industries/claude-code-acp'])

/**
 * An agent that runs Claude Code through the Claude Agent SDK. The SDK puts
 * the session's MCP servers, headers and all, on Claude Code's command line
 * (`--mcp-config <json>`, visible in `ps`), but such an agent also takes SDK
 * options in `session/new`'s `_meta.claudeCode.options`, `env` included. It
 * declares that namespace in `agentCapabilities._meta.claudeCode`
 * (claude-agent-acp 0.23.1 does), or is known by name.
 */
export function takesClaudeSdkEnv(initializeResponse: unknown): boolean {
  const result = initializeResult(initializeResponse)
  const declared = result?.agentCapabilities?._meta?.claudeCode
  const name = result?.agentInfo?.name
  return (
    (declared !== null && typeof declared === 'object') || (typeof name === 'string' && CLAUDE_SDK_AGENTS.has(name))
  )
}

/** What an ACP projection is made from, besides the servers: the agent, and the session's own context. */
export interface AcpSessionContext {
  token: string
  initializeResponse: unknown
  /** The PATH the agent's commands get: the state bin dir (the connector CLIs' shims) first. */
  path: string
  skillRoots: readonly SkillRootWithSkills[]
  /** This session's projection dir (fresh), for the Skill links of a Claude SDK agent. */
  sessionDir: string
}

/**
 * The connector server in ACP's shape. ACP itself carries MCP servers only:
 * a host that started the agent before it could ask for the session has no
 * way to give it the CLIs or the Skills. A Claude SDK agent takes Claude
 * Code's options in `sessionMeta`, so it gets all three there: the token in
 * Claude Code's env with the header naming it as `${TUTTI_CONNECTOR_TOKEN}`
 * (no token on its command line), PATH with the shims first, and the Skills
 * as an additional directory (Claude Code's `--add-dir`, whose
 * `.claude/skills/` it scans). Any other agent gets the literal header.
 */
export async function projectAcp(
  servers: readonly MCPServerBinding[],
  context: AcpSessionContext,
): Promise<AcpProjection> {
  const viaSdk = takesClaudeSdkEnv(context.initializeResponse)
  const { token } = context
  const headerValue = (value: string): string => (viaSdk ? value.split(token).join(`\${${TOKEN_ENV}}`) : value)
  const mcpServers = servers.map((s) => ({
    type: 'http' as const,
    name: s.name,
    url: s.url,
    headers: Object.entries(s.headers).map(([name, value]) => ({ name, value: headerValue(value) })),
  }))
  if (!viaSdk) return { kind: 'acp', mcpServers, connectors: { attached: true } }
  const addDir = path.join(context.sessionDir, 'acp', 'add-dir')
  await linkSkills(path.join(addDir, '.claude', 'skills'), context.skillRoots)
  const options = { env: { [TOKEN_ENV]: token, PATH: context.path }, additionalDirectories: [addDir] }
  return { kind: 'acp', mcpServers, sessionMeta: { claudeCode: { options } }, connectors: { attached: true } }
}

export function plainAcp(reason: string): AcpProjection {
  return { kind: 'acp', mcpServers: [], connectors: { attached: false, reason } }
}
