import path from 'node:path'
import { byPrecedence, shown, type ClientConfig, type ConfigPlaces } from './client-entry.js'
import { entriesOf, readConfigJson, serverMap } from './config-files.js'
import { workspaceValues } from './cursor.js'
import { inputVariables } from './placeholders.js'

/**
 * VS Code: the user profile's `mcp.json`, shadowed by the workspace's
 * `.vscode/mcp.json`. Servers are under `servers`; `${input:id}` names one
 * of the file's `inputs`, which becomes a declared variable (a
 * `password: true` input is a credential), `${env:NAME}` a variable.
 */
export function vscodeUserFile(places: ConfigPlaces): string {
  const user = ['Code', 'User', 'mcp.json']
  if (places.platform === 'darwin') return path.join(places.home, 'Library', 'Application Support', ...user)
  if (places.platform === 'win32')
    return path.join(places.env.APPDATA ?? path.join(places.home, 'AppData', 'Roaming'), ...user)
  return path.join(places.env.XDG_CONFIG_HOME || path.join(places.home, '.config'), ...user)
}

export async function readVscode(places: ConfigPlaces): Promise<ClientConfig> {
  const userFile = vscodeUserFile(places)
  const projectFile = path.join(places.project, '.vscode', 'mcp.json')
  const scopes = []
  for (const [file, baseDir] of [
    [userFile, undefined],
    [projectFile, places.project],
  ] as const) {
    const doc = await readConfigJson(places, file)
    const syntax = { envColon: true, fixed: workspaceValues(places), inputs: inputVariables(doc?.inputs) }
    scopes.push({
      entries: entriesOf(serverMap(places, file, doc, 'servers'), {
        origin: shown(places, file),
        syntax,
        ...(baseDir ? { baseDir } : {}),
      }),
    })
  }
  return { kind: 'VS Code config', files: [userFile, projectFile], ...byPrecedence(scopes) }
}
