import type { GivenKey } from '../manifest/given-keys.js'
import type { SourceIdentity } from '../store/source-identity.js'

/**
 * What a source without a tutti manifest becomes: the directory that will be
 * the release, the manifest written into it, and the parts of the package
 * tutti does not carry (said on stderr, never silently dropped).
 */
export interface GeneratedSource {
  /** The directory that becomes the release (a staged copy; tutti-connector.json is written into it). */
  root: string
  /** The manifest as JSON data (validated by the normal release loader once written). */
  manifest: Record<string, unknown>
  /** What kind of package it was, for messages: "npm package", "Claude Code plugin", "server.json"… */
  kind: string
  /** Which package it is (its kind and its own name): another one under a taken key is refused without --replace. */
  source: SourceIdentity
  /** Parts that were skipped, each a sentence naming it. */
  skipped: string[]
  /** How a part was carried that the user should know (a secret the server takes in its arguments). */
  notes?: string[]
  /** Values the source itself carries (a `--header` value): stored as credentials, never in the manifest. */
  keys?: GivenKey[]
}

export interface SourceOptions {
  /** `--key`: the connector key instead of the derived one. */
  key?: string
  /** `--server NAME`: which of several MCP servers becomes the connector. */
  server?: string
  /** Arguments after `--`, appended to a stdio server's arguments. */
  args?: string[]
  /** The command form (`install -- <command> [args…]`): the server's command and arguments, no package. */
  command?: string[]
  /** `--header "Name: value"` of a remote server (a URL source). */
  headers?: string[]
  /** A server.json npm package: the version `connector update` chose over the document's pin. */
  packageVersion?: string
  /** The installing shell's environment (npm, runtimes on PATH). */
  env: NodeJS.ProcessEnv
  /** Where fetched and unpacked packages go (made on first use; the caller removes what is left). */
  scratchDir: () => Promise<string>
}

/** A choice among several servers: `--server` names it, or the error lists them all. */
export function chooseServer<T>(
  what: string,
  choices: ReadonlyMap<string, T>,
  wanted: string | undefined,
  inputError: (message: string) => Error,
): [string, T] {
  const names = [...choices.keys()]
  if (wanted !== undefined) {
    const chosen = choices.get(wanted)
    if (chosen === undefined)
      throw inputError(`${what} has no MCP server "${wanted}"; its servers: ${names.join(', ')}`)
    return [wanted, chosen]
  }
  if (names.length > 1)
    throw inputError(`${what} has ${names.length} MCP servers (${names.join(', ')}); choose one with --server NAME`)
  return [names[0]!, choices.get(names[0]!)!]
}
