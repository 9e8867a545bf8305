import { ServerJsonInputs } from '../server-json-inputs.js'
import { isRecord, type EntryInput } from './client-entry.js'

/**
 * The placeholder forms of each client, rewritten to the one the plugin
 * mapper reads (`${NAME}`, `${NAME:-default}`): VS Code's and Cursor's
 * `${env:NAME}`, Gemini's `$NAME`, VS Code's `${input:id}` (a declared
 * variable), and the values known at import (`${workspaceFolder}`,
 * `${userHome}`). Anything else cannot be resolved outside the client.
 */
export interface PlaceholderSyntax {
  /** `${env:NAME}` (VS Code, Cursor). */
  envColon?: boolean
  /** `$NAME` without braces (Gemini). */
  bareDollar?: boolean
  /** Placeholders with a value known now: `workspaceFolder` → the project directory. */
  fixed?: Record<string, string>
  /** VS Code `inputs` by id. */
  inputs?: ReadonlyMap<string, EntryInput>
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?$/

export class PlaceholderRewriter {
  /** The inputs the entry used, by variable name. */
  readonly used = new Map<string, EntryInput>()
  readonly unresolved = new Set<string>()

  constructor(private readonly syntax: PlaceholderSyntax) {}

  rewrite(value: string): string {
    let out = value.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
      // an editor variable (`${workspaceFolder}`) before a plain `${NAME}` of the environment
      const fixed = this.syntax.fixed && Object.hasOwn(this.syntax.fixed, inner) ? this.syntax.fixed[inner] : undefined
      if (fixed !== undefined) return fixed
      if (PLAIN.test(inner)) return whole
      const env = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(inner)
      if (env && this.syntax.envColon) return `\${${env[1]}}`
      const input = /^input:(.+)$/.exec(inner)
      const declared = input ? this.syntax.inputs?.get(input[1]!) : undefined
      if (declared) {
        this.used.set(declared.name, declared)
        return `\${${declared.name}}`
      }
      this.unresolved.add(whole)
      return whole
    })
    if (this.syntax.bareDollar)
      out = out.replace(
        /(^|[^$\\])\$([A-Za-z_][A-Za-z0-9_]*)/g,
        (_m, before: string, name: string) => `${before}\${${name}}`,
      )
    return out
  }

  /** Every string the mapper reads (command, args, env, cwd, url, headers) of an entry, rewritten. */
  entry(server: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = { ...server }
    for (const field of ['command', 'cwd', 'url'])
      if (typeof out[field] === 'string') out[field] = this.rewrite(out[field])
    if (Array.isArray(out.args)) out.args = out.args.map((a) => (typeof a === 'string' ? this.rewrite(a) : a))
    for (const field of ['env', 'headers']) {
      const map = out[field]
      if (isRecord(map))
        out[field] = Object.fromEntries(
          Object.entries(map).map(([k, v]) => [k, typeof v === 'string' ? this.rewrite(v) : v]),
        )
    }
    return out
  }

  /** Why the entry cannot be imported, if a placeholder is left that only the client can resolve. */
  problem(): string | undefined {
    if (!this.unresolved.size) return undefined
    return `${[...this.unresolved].join(', ')} can only be resolved by the client itself`
  }
}

/** VS Code `inputs` as variables: `${input:api-key}` becomes `${API_KEY}`. */
export function inputVariables(inputs: unknown): Map<string, EntryInput> {
  const out = new Map<string, EntryInput>()
  if (!Array.isArray(inputs)) return out
  for (const input of inputs) {
    if (!isRecord(input) || typeof input.id !== 'string') continue
    const description = typeof input.description === 'string' ? input.description.slice(0, 1024) : undefined
    out.set(input.id, {
      name: ServerJsonInputs.envName(input.id),
      markedSecret: input.password === true,
      ...(description ? { description } : {}),
    })
  }
  return out
}
