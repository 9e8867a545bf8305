import { z } from 'zod'
import { MCP_TIMEOUT_LIMITS } from '../manifest/schema.js'
import { PluginVariables } from './plugin-variables.js'

/**
 * One MCP server entry as Claude Code (`.mcp.json`, `~/.claude.json`) and
 * Codex (`.mcp.json` of a plugin, `[mcp_servers.*]` of config.toml) write
 * it, mapped to a tutti `mcp` section with its declarations. Every field of
 * the entry is mapped or listed under `skipped` with its reason: the schema
 * keeps unknown keys so that none is dropped without a word.
 */
const stringMap = z.record(z.string(), z.string())
const names = z.array(z.string())
const seconds = z.number().positive('must be a number of seconds above 0')

/** Fields both kinds of entry may have (Codex's, mostly). */
const common = {
  enabled: z.boolean().optional(),
  required: z.boolean().optional(),
  enabled_tools: names.optional(),
  disabled_tools: names.optional(),
  startup_timeout_sec: seconds.optional(),
  startup_timeout_ms: z.number().positive('must be a number of milliseconds above 0').optional(),
  tool_timeout_sec: seconds.optional(),
}

const stdioEntry = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).default([]),
  env: stringMap.default({}),
  /** Codex: variables passed through from the parent's environment (by name). */
  env_vars: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).optional(),
  cwd: z.string().optional(),
  ...common,
})
const remoteEntry = z.looseObject({
  // Codex writes no type: a url is a Streamable HTTP server
  type: z.enum(['http', 'streamable-http', 'sse']).optional(),
  url: z.string().min(1, 'must not be empty'),
  headers: stringMap.default({}),
  http_headers: stringMap.optional(),
  env_http_headers: stringMap.optional(),
  bearer_token_env_var: z.string().optional(),
  oauth_resource: z.string().optional(),
  scopes: names.optional(),
  oauth: z.looseObject({ clientId: z.string().optional() }).optional(),
  ...common,
})
type StdioEntry = z.infer<typeof stdioEntry>
type RemoteEntry = z.infer<typeof remoteEntry>

export const pluginServerSchema = z.union([stdioEntry, remoteEntry], {
  error: 'must be a stdio server ({"command": …}) or a remote one ({"url": …})',
})
export type PluginServer = StdioEntry | RemoteEntry

/** A stdio entry (`command`), else a remote one (`url`). */
export const isStdioEntry = (server: PluginServer): server is StdioEntry => typeof server.command === 'string'

export const pluginMcpFileSchema = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) })

/** Names the plugin formats give the plugin's root directory. */
const ROOT_NAMES = ['CLAUDE_PLUGIN_ROOT', 'PLUGIN_ROOT']

export interface MappedServer {
  mcp: Record<string, unknown>
  /** The manifest's `auth` when it is not built from `variables` alone (OAuth). */
  auth?: Record<string, unknown>
  variables: Array<{ name: string; secret: boolean; required?: false }>
  config: Array<{ name: string; default?: string; secret?: true }>
  skipped: string[]
  /** What the user should know about how a field was carried (a secret in argv, a value written in the file). */
  notes: string[]
}

/** Fields that are mapped, or whose skipping has a reason of its own below. */
const KNOWN = new Set([
  'type',
  'command',
  'args',
  'env',
  'env_vars',
  'cwd',
  'url',
  'headers',
  'http_headers',
  'env_http_headers',
  'bearer_token_env_var',
  'oauth_resource',
  'scopes',
  'oauth',
  ...Object.keys(common),
])

const INSTALLED_ANYWAY = 'the client has it switched off; tutti installs what it is asked to'

/** Fields tutti knows and does not carry, with why. */
const REASONS: Record<string, string> = {
  headersHelper: 'tutti does not run a command to compute headers; set them with headers or env_http_headers',
  required: 'tutti serves the other connectors when one fails to start, and says which in its status',
}

/**
 * Codex's `enabled_tools` (only these) and `disabled_tools` (applied after it) as the manifest's default tool
 * filter: `mcp.tools.allow`, or `mcp.tools.hide` when only tools to leave out are named.
 */
function toolFilterOf(server: PluginServer): { allow: string[] } | { hide: string[] } | undefined {
  const { enabled_tools: enabled, disabled_tools: disabled } = server
  if (enabled) return { allow: enabled.filter((n) => !disabled?.includes(n)) }
  return disabled?.length ? { hide: [...disabled] } : undefined
}

export class PluginServerMapper {
  private readonly vars = new PluginVariables()

  /** A command under the plugin root is a path inside the release; anything else is looked up on PATH. */
  private command(command: string): string {
    for (const name of ROOT_NAMES) {
      for (const prefix of [`\${${name}}/`, `$${name}/`])
        if (command.startsWith(prefix)) return command.slice(prefix.length)
    }
    return command
  }

  toTutti(server: PluginServer, extraArgs: readonly string[]): MappedServer {
    const skipped: string[] = []
    const notes: string[] = []
    let mcp: Record<string, unknown>
    let auth: Record<string, unknown> | undefined
    if (isStdioEntry(server)) {
      const isRoot = ROOT_NAMES.some((n) => server.cwd === `\${${n}}`)
      const cwd = server.cwd
      if (cwd !== undefined && !isRoot) skipped.push(`cwd "${cwd}": tutti runs a server in its release directory`)
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(server.env)) env[k] = this.vars.map(v, 'env', k, notes)
      for (const entry of server.env_vars ?? []) this.vars.passThrough(typeof entry === 'string' ? entry : entry.name)
      const args = [...server.args.map((a) => this.vars.map(a, 'args')), ...extraArgs]
      mcp = { transport: 'stdio', command: this.command(server.command), args, env }
    } else {
      const headers: Record<string, string> = {}
      const written = { ...server.http_headers, ...server.headers }
      for (const [k, v] of Object.entries(written)) headers[k] = this.vars.map(v, 'headers', k, notes)
      for (const [k, name] of Object.entries(server.env_http_headers ?? {})) {
        headers[k] = this.vars.reference(name, 'headers')
      }
      if (server.bearer_token_env_var !== undefined) {
        headers.Authorization = `Bearer ${this.vars.reference(server.bearer_token_env_var, 'headers')}`
      }
      mcp = { transport: 'http', url: this.vars.map(server.url, 'url'), headers }
      auth = this.oauth(server, skipped)
    }
    const timeouts = this.timeouts(server, notes)
    if (timeouts) mcp.timeouts = timeouts
    const tools = toolFilterOf(server)
    if (tools) mcp.tools = tools
    if (server.enabled === false) skipped.push(`enabled = false: ${INSTALLED_ANYWAY}`)
    for (const field of Object.keys(server)) {
      if (REASONS[field]) skipped.push(`${field}: ${REASONS[field]}`)
      else if (!KNOWN.has(field)) skipped.push(`${field}: not a field tutti knows; it is not carried`)
    }
    const declared = this.vars.declarations(notes)
    if (auth && declared.variables.length) {
      skipped.push('OAuth (oauth_resource, scopes, oauth): the server is reached with the declared credentials instead')
      auth = undefined
    }
    return { mcp, ...(auth ? { auth } : {}), ...declared, skipped, notes }
  }

  /** Codex's `oauth_resource` and `scopes`, Claude's `oauth.clientId`: the server signs in with OAuth. */
  private oauth(server: RemoteEntry, skipped: string[]): Record<string, unknown> | undefined {
    const { oauth_resource: resource, scopes, oauth } = server
    for (const field of Object.keys(oauth ?? {})) {
      if (field !== 'clientId') skipped.push(`oauth.${field}: tutti's sign-in chooses its own`)
    }
    const clientId = oauth?.clientId
    if (resource === undefined && scopes === undefined && clientId === undefined) return undefined
    const asked = { ...(resource ? { resource } : {}), ...(scopes?.length ? { scopes } : {}) }
    return { kind: 'oauth', ...(clientId ? { clientId } : {}), ...asked }
  }

  /** Codex's start and call bounds as `mcp.timeouts` (start in seconds or, older, ms), within tutti's limits. */
  private timeouts(server: PluginServer, notes: string[]): Record<string, number> | undefined {
    const ms = server.startup_timeout_ms
    const startupSeconds = server.startup_timeout_sec ?? (ms === undefined ? undefined : ms / 1000)
    const given = { startupSeconds, toolCallSeconds: server.tool_timeout_sec }
    const out: Record<string, number> = {}
    type Field = keyof typeof MCP_TIMEOUT_LIMITS
    for (const [field, seconds] of Object.entries(given) as Array<[Field, number | undefined]>) {
      if (seconds === undefined) continue
      const limit = MCP_TIMEOUT_LIMITS[field]
      const what = field === 'startupSeconds' ? 'start' : 'tool call'
      if (seconds > limit) notes.push(`a ${what} timeout of ${seconds} s is more than tutti allows: ${limit} s is used`)
      out[field] = Math.min(seconds, limit)
    }
    return Object.keys(out).length ? out : undefined
  }
}
