import { z } from 'zod'
import { DATA_DIR_VAR, RELEASE_ROOT_VAR } from '../names.js'

/**
 * One server of a plugin's MCP config (`.mcp.json`, `mcp.json` or inline
 * `mcpServers`), as Claude Code, Codex and Agent Plugins write it, mapped to
 * a tutti `mcp` section. `${VAR}` references to the user's environment
 * become declared variables: secret auth variables where a secret belongs
 * (environment, headers), settings in arguments (argv is public).
 */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

export const pluginServerSchema = z.union([
  z.object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1, 'must not be empty'),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
  }),
  z.object({
    type: z.enum(['http', 'streamable-http', 'sse']),
    url: z.string().min(1, 'must not be empty'),
    headers: z.record(z.string(), z.string()).default({}),
  }),
], { error: 'must be a stdio server ({"command": …}) or a remote one ({"type": "http", "url": …})' })
export type PluginServer = z.infer<typeof pluginServerSchema>

export const pluginMcpFileSchema = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) })

/** Names the plugin formats give the plugin's root and data directories. */
const ROOT_NAMES = ['CLAUDE_PLUGIN_ROOT', 'PLUGIN_ROOT']
const DATA_NAMES = ['CLAUDE_PLUGIN_DATA', 'PLUGIN_DATA']
/** `${NAME}` or `${NAME:-default}` (Claude Code's form). */
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

export interface MappedServer {
  mcp: Record<string, unknown>
  variables: Array<{ name: string; secret: boolean }>
  config: Array<{ name: string; default?: string }>
  skipped: string[]
}

export class PluginServerMapper {
  private readonly variables = new Map<string, { name: string; secret: boolean }>()
  private readonly config = new Map<string, { name: string; default?: string }>()

  /** `place`: where the value goes; a secret may go anywhere but argv. */
  private map(value: string, place: 'args' | 'env' | 'url' | 'headers'): string {
    return value.replace(REF, (whole, name: string, fallback: string | undefined) => {
      if (ROOT_NAMES.includes(name)) return `\${${RELEASE_ROOT_VAR}}`
      if (DATA_NAMES.includes(name)) return `\${${DATA_DIR_VAR}}`
      if (!ENV_NAME.test(name) || name.startsWith('TUTTI_')) return whole
      if (fallback !== undefined || place === 'args' || place === 'url') {
        if (!this.variables.has(name)) this.config.set(name, { name, ...(fallback !== undefined ? { default: fallback } : {}) })
      } else if (!this.config.has(name)) this.variables.set(name, { name, secret: true })
      return `\${${name}}`
    })
  }

  /** A command under the plugin root is a path inside the release; anything else is looked up on PATH. */
  private command(command: string): string {
    for (const name of ROOT_NAMES) {
      for (const prefix of [`\${${name}}/`, `$${name}/`]) if (command.startsWith(prefix)) return command.slice(prefix.length)
    }
    return command
  }

  toTutti(server: PluginServer, extraArgs: readonly string[]): MappedServer {
    const skipped: string[] = []
    let mcp: Record<string, unknown>
    if ('command' in server) {
      if (server.cwd !== undefined && !ROOT_NAMES.some((n) => server.cwd === `\${${n}}`)) skipped.push(`the server's cwd "${server.cwd}" (tutti runs a server in its release directory)`)
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(server.env)) env[k] = this.map(v, 'env')
      mcp = { transport: 'stdio', command: this.command(server.command), args: [...server.args.map((a) => this.map(a, 'args')), ...extraArgs], env }
    } else {
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(server.headers)) headers[k] = this.map(v, 'headers')
      mcp = { transport: 'http', url: this.map(server.url, 'url'), headers }
    }
    return { mcp, variables: [...this.variables.values()], config: [...this.config.values()], skipped }
  }
}
