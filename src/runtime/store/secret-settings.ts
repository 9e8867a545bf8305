import { MANIFEST_FILE } from '../names.js'
import type { InstalledConnector } from './state-files.js'

/** The values `connect` was given for secret settings (they join the credentials), and the rest of the settings. */
export function splitSecretSettings(
  input: { credentials: Record<string, string>; settings: Record<string, string> },
  secretSettings: readonly string[],
) {
  const secrets: Record<string, string> = { ...input.credentials }
  const settings: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.settings)) {
    if (secretSettings.includes(name)) secrets[name] = value
    else settings[name] = value
  }
  return { secrets, settings }
}

/**
 * An install from before secret settings kept them in installed.json: they are taken out of it (and
 * returned, for the credentials) whenever the entry is written again.
 */
export function moveSecretSettings(
  entry: InstalledConnector,
  secretSettings: readonly string[],
): Record<string, string> {
  const moved: Record<string, string> = {}
  for (const name of secretSettings) {
    const value = entry.settings?.[name]
    if (value === undefined) continue
    moved[name] = value
    delete entry.settings![name]
  }
  if (entry.settings && !Object.keys(entry.settings).length) delete entry.settings
  return moved
}

/** A hand-written manifest is the author's: how to declare a variable in it. */
export function declareHint(name: string, what: 'credential' | 'setting'): string {
  const where =
    what === 'credential'
      ? `"auth": {"kind": "env", "variables": [{"name": "${name}"}]}`
      : `"config": [{"name": "${name}"}]`
  return `; declare it in the release's ${MANIFEST_FILE} (${where}) and install it again`
}
