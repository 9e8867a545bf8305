import path from 'node:path'
import { byPrecedence, shown, type ClientConfig, type ConfigPlaces } from './client-entry.js'
import { entriesOf, readConfigJson, serverMap } from './config-files.js'
import type { PlaceholderSyntax } from './placeholders.js'

/**
 * Cursor: `~/.cursor/mcp.json`, shadowed by the project's `.cursor/mcp.json`; `${env:NAME}`, `${userHome}`,
 * `${workspaceFolder}`.
 */
export async function readCursor(places: ConfigPlaces): Promise<ClientConfig> {
  const userFile = path.join(places.home, '.cursor', 'mcp.json')
  const projectFile = path.join(places.project, '.cursor', 'mcp.json')
  const syntax: PlaceholderSyntax = { envColon: true, fixed: workspaceValues(places) }
  const scopes = []
  for (const [file, baseDir] of [
    [userFile, undefined],
    [projectFile, places.project],
  ] as const) {
    const servers = serverMap(places, file, await readConfigJson(places, file), 'mcpServers')
    scopes.push({
      entries: entriesOf(servers, { origin: shown(places, file), syntax, ...(baseDir ? { baseDir } : {}) }),
    })
  }
  return { kind: 'Cursor config', files: [userFile, projectFile], ...byPrecedence(scopes) }
}

/** The editor variables known at import (Cursor and VS Code share them). */
export function workspaceValues(places: ConfigPlaces): Record<string, string> {
  return {
    workspaceFolder: places.project,
    workspaceFolderBasename: path.basename(places.project),
    userHome: places.home,
    pathSeparator: path.sep,
    '/': path.sep,
  }
}
