import { ErrorCodes, TuttiError } from '../../errors.js'
import { readSourceJson } from '../source-json.js'
import { isRecord, shown, type ClientEntry, type ConfigPlaces } from './client-entry.js'
import { PlaceholderRewriter, type PlaceholderSyntax } from './placeholders.js'

/** A client's JSON config file as an object; undefined when it does not exist. */
export async function readConfigJson(places: ConfigPlaces, file: string): Promise<Record<string, unknown> | undefined> {
  const data = await readSourceJson(file, shown(places, file), { optional: true })
  if (data === undefined) return undefined
  if (!isRecord(data))
    throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${shown(places, file)}: must be a JSON object`)
  return data
}

/** The map of servers under `field` (absent: none). */
export function serverMap(
  places: ConfigPlaces,
  file: string,
  doc: Record<string, unknown> | undefined,
  field: string,
): Record<string, unknown> {
  const servers = doc?.[field]
  if (servers === undefined) return {}
  if (!isRecord(servers))
    throw new TuttiError(
      ErrorCodes.MANIFEST_INVALID,
      `${shown(places, file)}: "${field}" must be an object of servers by name`,
    )
  return servers
}

export interface EntryOptions {
  origin: string
  syntax: PlaceholderSyntax
  baseDir?: string
  /** The client's own fields turned into the mapper's (Gemini `httpUrl`, Codex `env_vars`). */
  normalise?: (server: Record<string, unknown>) => { server: Record<string, unknown>; skipped?: string[] }
}

/** Each server of a map as an entry, its placeholders rewritten. */
export function entriesOf(servers: Record<string, unknown>, options: EntryOptions): ClientEntry[] {
  return Object.entries(servers).map(([name, raw]) => {
    const base = { name, origin: options.origin, ...(options.baseDir ? { baseDir: options.baseDir } : {}) }
    if (!isRecord(raw)) return { ...base, server: raw, inputs: [], skipped: [] }
    const normal = options.normalise ? options.normalise(raw) : { server: raw }
    const rewriter = new PlaceholderRewriter(options.syntax)
    const server = rewriter.entry(normal.server)
    const problem = rewriter.problem()
    return {
      ...base,
      server,
      inputs: [...rewriter.used.values()],
      skipped: normal.skipped ?? [],
      ...(problem ? { problem } : {}),
    }
  })
}
