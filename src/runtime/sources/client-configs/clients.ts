import path from 'node:path'
import { ErrorCodes, TuttiError } from '../../errors.js'
import { readClaudeCode, CLAUDE_CODE_KIND } from './claude-code.js'
import { readClaudeDesktop } from './claude-desktop.js'
import { CLIENTS, isRecord, shown, type ClientConfig, type ClientName, type ConfigPlaces } from './client-entry.js'
import { readCodex } from './codex.js'
import { entriesOf } from './config-files.js'
import { readCursor, workspaceValues } from './cursor.js'
import { readGemini } from './gemini.js'
import { inputVariables } from './placeholders.js'
import { readVscode } from './vscode.js'

/** `install --from <client>`: each client's reader. */
const READERS: Record<ClientName, (places: ConfigPlaces) => Promise<ClientConfig>> = {
  claude: readClaudeCode,
  'claude-desktop': readClaudeDesktop,
  codex: readCodex,
  cursor: readCursor,
  vscode: readVscode,
  gemini: readGemini,
}

export function readClientConfig(client: string, places: ConfigPlaces): Promise<ClientConfig> {
  if (!(CLIENTS as readonly string[]).includes(client))
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `--from "${client.slice(0, 64)}" is not a client tutti reads; it reads ${CLIENTS.join(', ')}`,
    )
  return READERS[client as ClientName](places)
}

/** The kind of connectors imported from a config document given directly (a file or `--json-entry`). */
export const CONFIG_DOCUMENT_KIND = 'MCP config'

/** File names that are MCP client configs, not a server.json. */
const CONFIG_FILE_NAMES = new Set(['.mcp.json', 'mcp.json', 'claude_desktop_config.json'])

/** Whether `data` (from a file named `file`) is an MCP client config: a map of servers, not a server.json. */
export function isConfigDocument(file: string, data: unknown): boolean {
  if (CONFIG_FILE_NAMES.has(path.basename(file))) return true
  return (
    isRecord(data) &&
    (isRecord(data.mcpServers) || (isRecord(data.servers) && !('packages' in data) && !('remotes' in data)))
  )
}

/**
 * A config document given directly: `{"mcpServers": {…}}` (Claude Code,
 * Cursor, Claude Desktop), `{"servers": {…}, "inputs": […]}` (VS Code), or
 * with `entryName`, one bare entry as `claude mcp add-json` takes it.
 * Relative paths are relative to the file's directory.
 */
export function configDocument(
  data: unknown,
  label: string,
  places: ConfigPlaces,
  options: { entryName?: string; baseDir: string },
): ClientConfig {
  if (!isRecord(data)) throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${label}: must be a JSON object`)
  const kind = path.basename(label) === '.mcp.json' ? CLAUDE_CODE_KIND : CONFIG_DOCUMENT_KIND
  const syntax = {
    envColon: true,
    fixed: { ...workspaceValues(places), workspaceFolder: options.baseDir },
    inputs: inputVariables(data.inputs),
  }
  const field = isRecord(data.mcpServers) ? 'mcpServers' : isRecord(data.servers) ? 'servers' : undefined
  let servers: Record<string, unknown>
  if (field) servers = data[field] as Record<string, unknown>
  else if (options.entryName !== undefined) servers = { [options.entryName]: data }
  else
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `${label}: a single server entry needs a name: give it with --key NAME`,
    )
  const entries = entriesOf(servers, { origin: label, syntax, baseDir: options.baseDir })
  return { kind, files: [label], entries, passed: [] }
}

export { CLIENTS, shown, type ClientConfig, type ClientName, type ConfigPlaces }
