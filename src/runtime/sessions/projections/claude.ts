import path from 'node:path'
import { writeJsonAtomic } from '../../fs/atomic-write.js'
import { linkSkills, type SkillRootWithSkills } from '../session-dir.js'
import { TOKEN_ENV, type ClaudeProjection, type MCPServerBinding } from '../prepared-runtime.js'

/**
 * Claude Code: an `--mcp-config` file whose Authorization header names the
 * token variable (Claude expands `${VAR}` from its environment, so no token
 * is written to disk), and an `--add-dir` directory holding the Skills.
 */
export async function projectClaude(
  dir: string,
  servers: readonly MCPServerBinding[],
  skillRoots: readonly SkillRootWithSkills[],
  token: string,
): Promise<ClaudeProjection> {
  const claudeDir = path.join(dir, 'claude')
  const mcpServers: ClaudeProjection['sdkMcpServers'] = {}
  const onDisk: Record<string, unknown> = {}
  for (const s of servers) {
    mcpServers[s.name] = { type: 'http', url: s.url, headers: { ...s.headers } }
    onDisk[s.name] = { type: 'http', url: s.url, headers: withTokenVariable(s.headers, token) }
  }
  const mcpConfigPath = path.join(claudeDir, 'mcp-config.json')
  await writeJsonAtomic(mcpConfigPath, { mcpServers: onDisk })
  const addDir = path.join(claudeDir, 'add-dir')
  await linkSkills(path.join(addDir, '.claude', 'skills'), skillRoots)
  return {
    kind: 'claude',
    mcpConfigPath,
    addDir,
    args: ['--mcp-config', mcpConfigPath, '--add-dir', addDir],
    sdkMcpServers: mcpServers,
  }
}

function withTokenVariable(headers: Record<string, string>, token: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) out[k] = v.split(token).join(`\${${TOKEN_ENV}}`)
  return out
}
