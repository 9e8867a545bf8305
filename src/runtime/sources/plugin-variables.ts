import { ErrorCodes, TuttiError } from '../errors.js'
import { isCredential, looksLikeCredential } from '../manifest/credential-names.js'
import { DATA_DIR_VAR, RELEASE_ROOT_VAR, RESERVED_VAR_PREFIX } from '../names.js'

/**
 * The user's variables a server entry references (`${VAR}`, `${VAR:-default}`,
 * Codex's `bearer_token_env_var`, `env_http_headers` and `env_vars`), each
 * declared once all its uses are known, so the order of the fields never
 * changes what a variable becomes:
 * - used in argv or the URL (public places): a setting, a secret one when it
 *   is a credential (stored 0600 and never shown, but readable in `ps`: said in the notes);
 * - with a default: a setting with that default, secret when it is a credential;
 * - in the environment or a header: a secret auth variable the connector needs;
 * - only passed through (`env_vars`): optional, a secret variable when it is a credential.
 */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** `${NAME}` or `${NAME:-default}` (Claude Code's form). */
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g
/** Names the plugin formats give the plugin's root and data directories. */
const ROOT_NAMES = ['CLAUDE_PLUGIN_ROOT', 'PLUGIN_ROOT']
const DATA_NAMES = ['CLAUDE_PLUGIN_DATA', 'PLUGIN_DATA']

export type VariablePlace = 'args' | 'env' | 'url' | 'headers'

interface Uses {
  places: Set<VariablePlace>
  fallback?: string
}

export interface Declarations {
  variables: Array<{ name: string; secret: boolean; required?: false }>
  config: Array<{ name: string; default?: string; secret?: true }>
}

export class PluginVariables {
  private readonly uses = new Map<string, Uses>()

  private use(name: string, place?: VariablePlace, fallback?: string): void {
    const uses = this.uses.get(name) ?? { places: new Set<VariablePlace>() }
    if (place) uses.places.add(place)
    if (fallback !== undefined && uses.fallback === undefined) uses.fallback = fallback
    this.uses.set(name, uses)
  }

  /** `value` with its references as tutti's; `field` (an env or header name) says if a written value is a secret. */
  map(value: string, place: VariablePlace, field?: string, notes?: string[]): string {
    let referenced = false
    const mapped = value.replace(REF, (whole, name: string, fallback: string | undefined) => {
      if (ROOT_NAMES.includes(name)) return `\${${RELEASE_ROOT_VAR}}`
      if (DATA_NAMES.includes(name)) return `\${${DATA_DIR_VAR}}`
      if (!ENV_NAME.test(name) || name.startsWith(RESERVED_VAR_PREFIX)) return whole
      referenced = true
      this.use(name, place, fallback)
      return `\${${name}}`
    })
    if (field !== undefined && !referenced && value !== '' && looksLikeCredential(field)) {
      notes?.push(
        `${place === 'env' ? 'env' : 'header'} ${field} has its value written in the config: it is kept as ` +
          "written in the connector's manifest, not in the 0600 credential store; " +
          'use a variable (${NAME}) to keep it secret',
      )
    }
    return mapped
  }

  /** A variable named by a field (`bearer_token_env_var`, `env_http_headers`), as its reference. */
  reference(name: string, place: VariablePlace): string {
    if (!ENV_NAME.test(name) || name.startsWith(RESERVED_VAR_PREFIX)) {
      throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `"${name}" is not a variable name tutti can declare`)
    }
    this.use(name, place)
    return `\${${name}}`
  }

  /** Codex's `env_vars`: the server gets the variable when it has a value. */
  passThrough(name: string): void {
    if (!ENV_NAME.test(name) || name.startsWith(RESERVED_VAR_PREFIX)) {
      throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `env_vars: "${name}" is not a variable name tutti can declare`)
    }
    this.use(name)
  }

  declarations(notes: string[]): Declarations {
    const out: Declarations = { variables: [], config: [] }
    for (const [name, { places, fallback }] of this.uses) {
      const secret = isCredential(name, { header: places.has('headers') })
      const marked: { secret?: true } = secret ? { secret: true } : {}
      const setting = { name, ...(fallback !== undefined ? { default: fallback } : {}), ...marked }
      if (places.has('args') || places.has('url')) {
        out.config.push(setting)
        if (secret) notes.push(publicPlaceNote(name, places.has('args') ? 'arguments' : 'URL'))
      } else if (fallback !== undefined) out.config.push(setting)
      else if (places.size) out.variables.push({ name, secret: true })
      else if (secret) out.variables.push({ name, secret: true, required: false })
      else out.config.push({ name })
    }
    return out
  }
}

function publicPlaceNote(name: string, where: 'arguments' | 'URL'): string {
  const readable = where === 'arguments' ? 'any local user can read it in `ps` while it runs' : 'requests carry it'
  return (
    `${name} goes in the server's ${where}, where ${readable}: tutti stores it as a secret setting ` +
    `(0600, never shown; set it with connect --env ${name}=…), but cannot keep it out of the ${where}`
  )
}
