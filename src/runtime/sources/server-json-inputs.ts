import { isCredential } from '../manifest/credential-names.js'
import type { ServerJsonArgument, ServerJsonInput, ServerJsonKeyValue } from './server-json-schema.js'

/** Where an input's value goes: argv and the URL are public, the environment and headers are not. */
export type InputPlace = 'args' | 'url' | 'env' | 'header'

/**
 * server.json inputs as tutti declarations: a credential (`isSecret`, a
 * name like a key, or a header value: credential-names.ts) becomes an auth
 * variable (required ones gate readiness), or, in argv, a secret setting
 * (0600, never shown); any other a setting with its default. A fixed
 * `value` is used as written, its `{variables}` resolved the same way.
 * Every input is referenced as `${NAME}` where it is used.
 */
export class ServerJsonInputs {
  readonly variables = new Map<string, { name: string; secret: boolean; required?: boolean; description?: string }>()
  readonly config = new Map<string, { name: string; default?: string; description?: string; secret?: true }>()
  readonly warnings: string[] = []

  /** An environment variable name for an input label: `target_dir` → TARGET_DIR, `X-API-Key` → X_API_KEY. */
  static envName(label: string): string {
    const name = label
      .replace(/^-+/, '')
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .toUpperCase()
    const safe = /^[A-Z_]/.test(name) ? name : `ARG_${name}`
    return safe.startsWith('TUTTI_') ? `SERVER_${safe}` : safe || 'VALUE'
  }

  /** Declare `input` under `name`, return its reference. In argv (public) a credential is a secret setting. */
  declare(name: string, input: ServerJsonInput, place: InputPlace): string {
    const description = input.description?.slice(0, 1024)
    const secret = isCredential(name, { markedSecret: input.isSecret === true, header: place === 'header' })
    if (secret && place !== 'args') {
      const optional = input.isRequired ? {} : { required: false as const }
      this.variables.set(name, { name, secret: true, ...optional, ...(description ? { description } : {}) })
    } else {
      if (secret) {
        this.warnings.push(
          `${name} is secret but goes in the server's arguments, which any local user can read in \`ps\` ` +
            'while it runs; it is declared as a secret setting (stored 0600, never shown)',
        )
      }
      const fallback = input.default !== undefined ? { default: input.default } : {}
      const marked: { secret?: true } = secret ? { secret: true } : {}
      this.config.set(name, { name, ...fallback, ...(description ? { description } : {}), ...marked })
    }
    return `\${${name}}`
  }

  /** A fixed value with its `{variables}` resolved, or the input itself as a declared variable. */
  value(input: ServerJsonInput & { variables?: Record<string, ServerJsonInput> }, label: string, place: InputPlace) {
    if (input.value === undefined) return this.declare(ServerJsonInputs.envName(label), input, place)
    return input.value.replace(/\{([A-Za-z0-9_-]+)\}/g, (whole, v: string) => {
      const variable = input.variables?.[v]
      if (!variable) return whole
      return variable.value ?? this.declare(ServerJsonInputs.envName(v), variable, place)
    })
  }

  /**
   * Command-line arguments: positional as their value, named as `--flag value`. An optional one with nothing to pass is
   * left out.
   */
  arguments(args: readonly ServerJsonArgument[] | undefined): string[] {
    const out: string[] = []
    for (const arg of args ?? []) {
      const label = arg.type === 'named' ? arg.name : (arg.valueHint ?? `argument_${out.length + 1}`)
      if (arg.value === undefined && arg.default === undefined && !arg.isRequired) continue
      const value = this.value(arg, label, 'args')
      if (arg.type === 'named') out.push(arg.name, value)
      else out.push(value)
    }
    return out
  }

  /**
   * Environment variables: one with a fixed value goes to mcp.env; an input reaches the server under its own name
   * anyway.
   */
  environment(vars: readonly ServerJsonKeyValue[] | undefined): Record<string, string> {
    const env: Record<string, string> = {}
    for (const v of vars ?? []) {
      const name = ServerJsonInputs.envName(v.name)
      if (v.value === undefined) {
        this.declare(name, v, 'env')
        if (name !== v.name) env[v.name] = `\${${name}}`
      } else env[v.name] = this.value(v, v.name, 'env')
    }
    return env
  }

  /** The declarations for the manifest. */
  manifestParts(): Record<string, unknown> {
    const parts: Record<string, unknown> = {}
    if (this.variables.size) parts.auth = { kind: 'env', variables: [...this.variables.values()] }
    if (this.config.size) parts.config = [...this.config.values()]
    return parts
  }
}
