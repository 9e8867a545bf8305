import path from 'node:path'

/** The MCP clients whose configs `install --from` reads. */
export const CLIENTS = ['claude', 'claude-desktop', 'codex', 'cursor', 'vscode', 'gemini'] as const
export type ClientName = (typeof CLIENTS)[number]

/** Where a client's files are: the user's home and config dirs, the project, the platform. */
export interface ConfigPlaces {
  home: string
  /** The project directory (`--project`, else the working directory), absolute. */
  project: string
  env: NodeJS.ProcessEnv
  platform: NodeJS.Platform
}

/** A declared input of the client (VS Code `inputs`): its placeholder becomes a variable of this name. */
export interface EntryInput {
  name: string
  markedSecret: boolean
  description?: string
}

/**
 * One server as a client's config declares it, normalised to the plugin
 * mapper's input (`pluginServerSchema`): placeholders are `${NAME}` or
 * `${NAME:-default}`, a remote server has its `type`. Which fields the
 * client had that tutti cannot carry is said in `skipped`.
 */
export interface ClientEntry {
  name: string
  /** Where it was declared, for messages: `~/.claude.json (user)`. */
  origin: string
  server: unknown
  inputs: EntryInput[]
  skipped: string[]
  /** The directory a relative command or argument is relative to (the client runs the server there). */
  baseDir?: string
  /** Why the entry cannot be imported at all (an unresolvable placeholder); it is reported as failed. */
  problem?: string
}

/** An entry the client declares that is not imported, and why (disabled there, shadowed by another scope). */
export interface PassedEntry {
  name: string
  origin: string
  reason: string
}

/** What a client's config files hold. */
export interface ClientConfig {
  /** The source kind of its connectors: "Claude Code config". */
  kind: string
  /** Every file looked at, in the order the client reads them. */
  files: string[]
  entries: ClientEntry[]
  passed: PassedEntry[]
}

/** `~/x` for a path under the home: what a person recognises in a message. */
export function shown(places: ConfigPlaces, file: string): string {
  const rel = path.relative(places.home, file)
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? `~/${rel}` : file
}

/**
 * Scopes read lowest precedence first: an entry of a later scope shadows
 * one of the same name before it, as the client itself resolves them.
 */
export function byPrecedence(scopes: Array<{ entries: ClientEntry[] }>): {
  entries: ClientEntry[]
  passed: PassedEntry[]
} {
  const chosen = new Map<string, ClientEntry>()
  const passed: PassedEntry[] = []
  for (const scope of scopes) {
    for (const entry of scope.entries) {
      const before = chosen.get(entry.name)
      if (before)
        passed.push({ name: before.name, origin: before.origin, reason: `shadowed by the entry in ${entry.origin}` })
      chosen.delete(entry.name)
      chosen.set(entry.name, entry)
    }
  }
  return { entries: [...chosen.values()], passed }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
