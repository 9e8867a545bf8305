import path from 'node:path'
import { shown, type ClientConfig, type ConfigPlaces } from './client-entry.js'
import { entriesOf, readConfigJson, serverMap } from './config-files.js'

/** Claude Desktop's `claude_desktop_config.json`, where the platform keeps it. */
export function claudeDesktopFile(places: ConfigPlaces): string {
  if (places.platform === 'darwin')
    return path.join(places.home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json')
  if (places.platform === 'win32')
    return path.join(
      places.env.APPDATA ?? path.join(places.home, 'AppData', 'Roaming'),
      'Claude',
      'claude_desktop_config.json',
    )
  return path.join(
    places.env.XDG_CONFIG_HOME || path.join(places.home, '.config'),
    'Claude',
    'claude_desktop_config.json',
  )
}

export async function readClaudeDesktop(places: ConfigPlaces): Promise<ClientConfig> {
  const file = claudeDesktopFile(places)
  const entries = entriesOf(serverMap(places, file, await readConfigJson(places, file), 'mcpServers'), {
    origin: shown(places, file),
    syntax: {},
  })
  return { kind: 'Claude Desktop config', files: [file], entries, passed: [] }
}
