import { ErrorCodes, TuttiError } from '../errors.js'
import { MANIFEST_FILE, RESERVED_VAR_PREFIX } from '../names.js'
import { isCredential } from './credential-names.js'
import { authVariableNames, ENV_NAME, secretSettingNames, settingNames, type ConnectorManifest } from './schema.js'

/**
 * The variables a user gives a connector on the command line (`--env`,
 * `--from-env`, `--secret`) or a source derives from its own input (a
 * `--header` value). A generated manifest declares the ones it lacks; a
 * hand-written one must declare each, and says how when it does not.
 */
export interface GivenKey {
  name: string
  value: string
  /** Marked secret by the user (`--secret`) or by the source (a header value). */
  secret: boolean
  /** Which flag gave it, for messages: "--env", "--secret", "--header"… */
  flag: string
}

/** What is stored: credentials in the 0600 store, settings in installed.json. */
export interface KeyValues {
  credentials: Record<string, string>
  settings: Record<string, string>
}

const invalid = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

/** A given name and value are usable at all: an env name, not reserved, not empty, given once. */
export function checkGivenKeys(keys: readonly GivenKey[]): void {
  const seen = new Set<string>()
  for (const k of keys) {
    if (!ENV_NAME.test(k.name)) {
      const name = JSON.stringify(k.name.slice(0, 64))
      throw invalid(`${k.flag} ${name}: not an environment variable name (letters, digits and _, not a digit first)`)
    }
    if (k.name.startsWith(RESERVED_VAR_PREFIX)) {
      throw invalid(`${k.flag} ${k.name}: names starting with ${RESERVED_VAR_PREFIX} are tutti's own`)
    }
    if (k.value === '') throw invalid(`${k.flag} ${k.name}: the value is empty`)
    if (seen.has(k.name)) {
      const flags = keys.filter((o) => o.name === k.name).map((o) => o.flag)
      throw invalid(`${k.name} is given twice (${flags.join(', ')})`)
    }
    seen.add(k.name)
  }
}

const credentialOf = (k: GivenKey) => isCredential(k.name, { markedSecret: k.secret })

type Json = Record<string, unknown>
const declaredVariables = (m: Json): Json[] => ((m.auth as Json | undefined)?.variables as Json[] | undefined) ?? []
const declaredConfig = (m: Json): Json[] => (m.config as Json[] | undefined) ?? []

/**
 * A generated manifest with every given name declared: a credential (by
 * `isCredential`) as a secret auth variable, anything else as a setting.
 * A literal the source put in `mcp.env` under that name gives way to it.
 */
export function declareGivenKeys(manifest: Json, keys: readonly GivenKey[], key: string): Json {
  const out: Json = structuredClone(manifest)
  const auth = (out.auth as Json | undefined) ?? { kind: 'none' }
  const variables = declaredVariables(out)
  const config = declaredConfig(out)
  for (const k of keys) {
    if (variables.some((v) => v.name === k.name) || config.some((c) => c.name === k.name)) continue
    if (!credentialOf(k)) config.push({ name: k.name })
    else if (auth.kind === 'oauth') {
      const signIn = `tutti connector connect ${key}`
      throw invalid(`${k.flag} ${k.name}: connector "${key}" signs in with OAuth (${signIn}); it takes no other key`)
    } else variables.push({ name: k.name, secret: true })
  }
  if (variables.length) out.auth = { kind: 'env', variables }
  if (config.length) out.config = config
  const mcp = out.mcp as Json | undefined
  const env = mcp?.transport === 'stdio' ? (mcp.env as Record<string, string> | undefined) : undefined
  for (const k of keys) if (env && k.name in env) env[k.name] = `\${${k.name}}`
  return out
}

/**
 * The given values split as the release declares them. An undeclared name
 * is refused (exit 2) with how to declare it; a secret given for a setting
 * that is not secret is refused too, since such settings are shown in status.
 */
export function splitGivenKeys(manifest: ConnectorManifest, keys: readonly GivenKey[]): KeyValues {
  const out: KeyValues = { credentials: {}, settings: {} }
  const variables = authVariableNames(manifest)
  const settings = settingNames(manifest)
  // a secret setting is kept with the credentials (credentials.json), so it may come as a secret
  const secretSettings = secretSettingNames(manifest)
  for (const k of keys) {
    if (variables.includes(k.name) || secretSettings.includes(k.name)) out.credentials[k.name] = k.value
    else if (!settings.includes(k.name)) throw notDeclared(manifest, k)
    else if (k.secret || credentialOf(k)) {
      throw invalid(
        `${k.flag} ${k.name}: connector "${manifest.key}" declares ${k.name} as a setting, which is not secret ` +
          `(status shows it); declare it in auth.variables of its ${MANIFEST_FILE} to keep it as a credential`,
      )
    } else out.settings[k.name] = k.value
  }
  return out
}

function notDeclared(manifest: ConnectorManifest, k: GivenKey): TuttiError {
  const declared = [...authVariableNames(manifest), ...settingNames(manifest)]
  const list = declared.length ? `it declares ${declared.join(', ')}` : 'it declares no variables'
  const where = credentialOf(k)
    ? `"auth": {"kind": "env", "variables": [{"name": "${k.name}"}]}`
    : `"config": [{"name": "${k.name}"}]`
  return new TuttiError(
    ErrorCodes.CREDENTIAL_INVALID,
    `${k.flag} ${k.name}: connector "${manifest.key}" does not declare ${k.name} (${list}); ` +
      `its ${MANIFEST_FILE} is its own, so declare it there (${where}) and install the release again`,
  )
}
