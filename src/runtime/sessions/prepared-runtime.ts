import type { SERVER_NAME } from '../names.js'
import type { ViewContext } from './view-context.js'

/**
 * What an agent host needs to start one agent session with connectors
 * (seed §7.1): the environment, the one authoritative `mcpServers` list and
 * the Skill roots, plus the provider's own projection, which is derived from
 * those and never carries a second, divergent copy of them.
 */
export interface MCPServerBinding {
  name: typeof SERVER_NAME
  type: 'http'
  url: string
  headers: Record<string, string>
}

export interface SkillRoot {
  connector: string
  dir: string
}

export interface CodexProjection {
  kind: 'codex'
  /** A session-isolated CODEX_HOME: the user's config plus `[mcp_servers.connector]`, and the Skills. */
  codexHome: string
  env: Record<string, string>
}

export interface ClaudeProjection {
  kind: 'claude'
  /** `{"mcpServers":{"connector":…}}` with `${TUTTI_CONNECTOR_TOKEN}` in place of the token. */
  mcpConfigPath: string
  /** A directory whose `.claude/skills/` holds the connector Skills. */
  addDir: string
  /** Ready-made Claude Code flags. */
  args: string[]
  /** The same server for Claude Agent SDK options (`mcpServers`). */
  sdkMcpServers: Record<string, { type: 'http'; url: string; headers: Record<string, string> }>
}

export interface AcpProjection {
  kind: 'acp'
  /** `session/new` / `session/load` entries; empty when the agent cannot take HTTP MCP servers. */
  mcpServers: Array<{ type: 'http'; name: string; url: string; headers: Array<{ name: string; value: string }> }>
  /**
   * The `_meta` a host passes to `session/new` / `session/load` with those
   * servers, when present: for a Claude Agent SDK agent, Claude Code's
   * options: the token and PATH (shims first) in its env, while the header
   * only names the variable, and the Skills' directory.
   */
  sessionMeta?: { claudeCode: { options: { env: Record<string, string>; additionalDirectories: string[] } } }
  /** Whether connector context is attached, and if not, why. */
  connectors: { attached: boolean; reason?: string }
}

export type ProviderProjection = CodexProjection | ClaudeProjection | AcpProjection

export interface PreparedRuntime {
  provider: string
  workspace: string
  session: string
  env: Record<string, string>
  mcpServers: MCPServerBinding[]
  skillRoots: SkillRoot[]
  projection: ProviderProjection
  /** Guidance an agent host may append to its system prompt. */
  prompt: string
  /** What the session's tools cost the model's context before it uses any. */
  context: ViewContext
  /** Whether a view narrows what the session sees, from which sources, and the active connectors it sees. */
  view: { narrowed: boolean; sources: string[]; connectors: string[] }
  /** Lines for the person starting the agent (over the context budget, an empty view); the commands print them. */
  warnings: string[]
}

export { TOKEN_ENV } from '../names.js'
