import path from 'node:path'
import {
  byPrecedence,
  isRecord,
  shown,
  type ClientConfig,
  type ConfigPlaces,
  type PassedEntry,
} from './client-entry.js'
import { entriesOf, readConfigJson, serverMap } from './config-files.js'

/**
 * Claude Code: user servers (top-level `mcpServers` of ~/.claude.json),
 * the project's shared `.mcp.json`, and local servers
 * (`projects["<abs dir>"].mcpServers`); local shadows project shadows user.
 * `${VAR}` and `${VAR:-default}` are Claude Code's own placeholder forms.
 */
export const CLAUDE_CODE_KIND = 'Claude Code config'

export async function readClaudeCode(places: ConfigPlaces): Promise<ClientConfig> {
  const dir = places.env.CLAUDE_CONFIG_DIR ? path.resolve(places.env.CLAUDE_CONFIG_DIR) : places.home
  const userFile = path.join(dir, '.claude.json')
  const projectFile = path.join(places.project, '.mcp.json')
  const doc = await readConfigJson(places, userFile)
  const projects = isRecord(doc?.projects) ? doc.projects : {}
  const local = isRecord(projects[places.project]) ? (projects[places.project] as Record<string, unknown>) : undefined
  const user = entriesOf(serverMap(places, userFile, doc, 'mcpServers'), {
    origin: `${shown(places, userFile)} (user)`,
    syntax: {},
  })
  const localEntries = entriesOf(serverMap(places, userFile, local, 'mcpServers'), {
    origin: `${shown(places, userFile)} (local to ${shown(places, places.project)})`,
    syntax: {},
    baseDir: places.project,
  })
  const shared = entriesOf(serverMap(places, projectFile, await readConfigJson(places, projectFile), 'mcpServers'), {
    origin: shown(places, projectFile),
    syntax: {},
    baseDir: places.project,
  })
  // a project's .mcp.json server the user turned down in Claude Code stays off
  const disabled = new Set(
    Array.isArray(local?.disabledMcpjsonServers)
      ? local.disabledMcpjsonServers.filter((n): n is string => typeof n === 'string')
      : [],
  )
  const passed: PassedEntry[] = []
  const approved = shared.filter((e) => {
    if (!disabled.has(e.name)) return true
    passed.push({
      name: e.name,
      origin: e.origin,
      reason: 'disabled in Claude Code for this project (disabledMcpjsonServers)',
    })
    return false
  })
  const chosen = byPrecedence([{ entries: user }, { entries: approved }, { entries: localEntries }])
  return {
    kind: CLAUDE_CODE_KIND,
    files: [userFile, projectFile],
    entries: chosen.entries,
    passed: [...passed, ...chosen.passed],
  }
}
