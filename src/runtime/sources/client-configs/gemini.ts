import path from 'node:path'
import {
  byPrecedence,
  isRecord,
  shown,
  type ClientConfig,
  type ClientEntry,
  type ConfigPlaces,
  type PassedEntry,
} from './client-entry.js'
import { entriesOf, readConfigJson, serverMap } from './config-files.js'

/**
 * Gemini CLI: `mcpServers` of `~/.gemini/settings.json`, shadowed by the
 * project's `.gemini/settings.json`. `httpUrl` is Streamable HTTP, `url`
 * without a `type` is SSE; `$VAR` and `${VAR}` name the environment.
 * `mcp.allowed` / `mcp.excluded` decide which servers Gemini starts.
 */
function normalise(server: Record<string, unknown>): { server: Record<string, unknown> } {
  const { httpUrl, ...rest } = server
  if (typeof httpUrl === 'string') return { server: { ...rest, type: 'http', url: httpUrl } }
  if (typeof rest.url === 'string' && rest.type === undefined) return { server: { ...rest, type: 'sse' } }
  return { server }
}

const names = (v: unknown) => new Set(Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : [])

export async function readGemini(places: ConfigPlaces): Promise<ClientConfig> {
  const userFile = path.join(places.home, '.gemini', 'settings.json')
  const projectFile = path.join(places.project, '.gemini', 'settings.json')
  const scopes: Array<{ entries: ClientEntry[] }> = []
  let allowed: Set<string> | undefined
  const excluded = new Set<string>()
  for (const [file, baseDir] of [
    [userFile, undefined],
    [projectFile, places.project],
  ] as const) {
    const doc = await readConfigJson(places, file)
    if (isRecord(doc?.mcp)) {
      if (Array.isArray(doc.mcp.allowed)) allowed = names(doc.mcp.allowed)
      for (const n of names(doc.mcp.excluded)) excluded.add(n)
    }
    const servers = serverMap(places, file, doc, 'mcpServers')
    scopes.push({
      entries: entriesOf(servers, {
        origin: shown(places, file),
        syntax: { bareDollar: true },
        normalise,
        ...(baseDir ? { baseDir } : {}),
      }),
    })
  }
  const chosen = byPrecedence(scopes)
  const passed: PassedEntry[] = [...chosen.passed]
  const entries = chosen.entries.filter((e) => {
    const reason = excluded.has(e.name)
      ? 'excluded in Gemini CLI settings (mcp.excluded)'
      : allowed && !allowed.has(e.name)
        ? 'not in mcp.allowed of Gemini CLI settings'
        : undefined
    if (reason) passed.push({ name: e.name, origin: e.origin, reason })
    return !reason
  })
  return { kind: 'Gemini CLI config', files: [userFile, projectFile], entries, passed }
}
