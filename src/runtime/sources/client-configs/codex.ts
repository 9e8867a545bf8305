import fs from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'smol-toml'
import { ErrorCodes, TuttiError } from '../../errors.js'
import {
  byPrecedence,
  isRecord,
  shown,
  type ClientConfig,
  type ClientEntry,
  type ConfigPlaces,
  type PassedEntry,
} from './client-entry.js'
import { entriesOf } from './config-files.js'

/**
 * Codex: `[mcp_servers.<name>]` of `$CODEX_HOME/config.toml` (default
 * ~/.codex), shadowed by the project's `.codex/config.toml`. Codex values
 * are literal (no placeholders); `env_vars` forwards variables of the
 * environment by name, `url` is Streamable HTTP, `enabled = false` is off.
 * Its other fields go to the mapper as they are.
 */
async function readToml(places: ConfigPlaces, file: string): Promise<Record<string, unknown> | undefined> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${shown(places, file)}: cannot be read`)
  }
  try {
    return parse(text) as Record<string, unknown>
  } catch (err) {
    const line = (err as { line?: number }).line
    throw new TuttiError(
      ErrorCodes.MANIFEST_INVALID,
      `${shown(places, file)}: not valid TOML${line ? ` (line ${line})` : ''}`,
    )
  }
}

function normalise(server: Record<string, unknown>): { server: Record<string, unknown>; skipped?: string[] } {
  const { env_vars: forwarded, enabled: _enabled, ...rest } = server
  const out: Record<string, unknown> = { ...rest }
  if (typeof out.url === 'string' && out.command === undefined && out.type === undefined) out.type = 'http'
  if (forwarded === undefined) return { server: out }
  const skipped: string[] = []
  const env: Record<string, unknown> = isRecord(out.env) ? { ...out.env } : {}
  for (const name of Array.isArray(forwarded) ? forwarded : [forwarded]) {
    if (typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) env[name] ??= `\${${name}}`
    else skipped.push(`"env_vars" entry ${JSON.stringify(name).slice(0, 64)}: not a variable name`)
  }
  return { server: { ...out, env }, skipped }
}

export async function readCodex(places: ConfigPlaces): Promise<ClientConfig> {
  const home = places.env.CODEX_HOME ? path.resolve(places.env.CODEX_HOME) : path.join(places.home, '.codex')
  const userFile = path.join(home, 'config.toml')
  const projectFile = path.join(places.project, '.codex', 'config.toml')
  const scopes: Array<{ entries: ClientEntry[] }> = []
  const passed: PassedEntry[] = []
  for (const [file, baseDir] of [
    [userFile, undefined],
    [projectFile, places.project],
  ] as const) {
    const doc = await readToml(places, file)
    const servers = doc?.mcp_servers ?? {}
    if (!isRecord(servers))
      throw new TuttiError(
        ErrorCodes.MANIFEST_INVALID,
        `${shown(places, file)}: mcp_servers must be a table of servers by name`,
      )
    const on: Record<string, unknown> = {}
    for (const [name, server] of Object.entries(servers)) {
      if (isRecord(server) && server.enabled === false)
        passed.push({ name, origin: shown(places, file), reason: 'disabled in Codex (enabled = false)' })
      else on[name] = server
    }
    scopes.push({
      entries: entriesOf(on, { origin: shown(places, file), syntax: {}, normalise, ...(baseDir ? { baseDir } : {}) }),
    })
  }
  const chosen = byPrecedence(scopes)
  return {
    kind: 'Codex config',
    files: [userFile, projectFile],
    entries: chosen.entries,
    passed: [...passed, ...chosen.passed],
  }
}
