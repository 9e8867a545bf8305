import { z } from 'zod'
import { ENV_NAME, isCredential } from './credential-names.js'
import { declaredToolPath, declaredToolsOf, mcpServer } from './server-schema.js'
import { CONNECTOR_KEY, CONNECTOR_KEY_RULE } from '../connector-key.js'
import { DATA_DIR_VAR, RELEASE_ROOT_VAR, RESERVED_VAR_PREFIX } from '../names.js'
import { nestsDeeperThan, TOOL_TABLE_LIMITS } from '../registry/tool-table-limits.js'

/**
 * The connector manifest (`tutti-connector.json`, DESIGN §5). Every object is
 * strict: an unknown field is an error naming its path. Filesystem rules
 * (paths inside the release, symlinks, Skills) are checked in load.ts.
 */
export { MANIFEST_FILE } from '../names.js'

export { CONNECTOR_KEY } from '../connector-key.js'
export { ENV_NAME } from './credential-names.js'
export {
  declaredToolsOf,
  effectiveActivation,
  manifestToolFilter,
  MAX_RESULT_BYTES_LIMITS,
  MCP_TIMEOUT_LIMITS,
  resultCapOf,
  type EffectiveActivation,
  type HttpServerSpec,
  type McpServerSpec,
  type StdioServerSpec,
  type ToolDeclaration,
} from './server-schema.js'
const VAR_REF = /\$\{([^}]*)\}/g
/**
 * Built-in variable: the connector's own writable data directory
 * (`connectors/<key>/data`, kept across upgrades). Releases are read-only,
 * so this is where a connector keeps state. No other environment leaks in.
 */
export { DATA_DIR_VAR, RELEASE_ROOT_VAR } from '../names.js'

const relativePath = z
  .string()
  .min(1, 'must not be empty')
  .refine(
    (p) => !p.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(p) && !p.startsWith('\\'),
    'must be a relative path inside the release, not an absolute path',
  )
  .refine((p) => !p.split(/[\\/]/).includes('..'), 'must stay inside the release ("..") is not allowed')

const authVariable = z.strictObject({
  name: z.string().regex(ENV_NAME, 'must be an environment variable name'),
  secret: z.boolean().default(true),
  /** false: the connector works without it (an optional API key); it does not gate readiness. */
  required: z.boolean().optional(),
  description: z.string().optional(),
})

/**
 * A setting (a directory, a region): set with `connect --set`, never gates readiness. A secret one
 * (`secret: true`, or a name that looks like a credential) is stored with the credentials and never shown.
 */
const setting = z.strictObject({
  name: z.string().regex(ENV_NAME, 'must be an environment variable name'),
  description: z.string().max(1024).optional(),
  secret: z.boolean().optional(),
  /** May use `${TUTTI_CONNECTOR_DATA}`, nothing else. */
  default: z.string().max(4096).optional(),
})

/** How the release's npm dependencies are installed (lifecycle scripts run only when asked for). */
const npmOptions = z.strictObject({ scripts: z.boolean().default(false) })

/** One scope-token (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/** The OAuth resource indicator (RFC 8707) to ask tokens for, when it is not the server's URL. */
const oauthResource = z
  .string()
  .url('must be an absolute URL')
  .refine((u) => /^https?:\/\//i.test(u), 'must use http or https')

const auth = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('none') }),
    z.strictObject({
      kind: z.literal('env'),
      variables: z.array(authVariable).min(1, 'must declare at least one variable').max(32),
    }),
    // OAuth 2.1 sign-in (`connect`) for a remote server: a pre-registered client id comes before CIMD and dynamic
    // registration
    z.strictObject({
      kind: z.literal('oauth'),
      clientId: z.string().min(1, 'must not be empty').max(1024).optional(),
      scopes: z.array(z.string().regex(SCOPE_TOKEN, 'must be one OAuth scope token')).max(64).optional(),
      resource: oauthResource.optional(),
    }),
  ],
  { error: 'must be {"kind":"none"}, {"kind":"env","variables":[...]} or {"kind":"oauth"}' },
)

export const manifestSchema = z
  .strictObject({
    schemaVersion: z.literal(1, { error: 'must be 1' }),
    key: z.string().regex(CONNECTOR_KEY, CONNECTOR_KEY_RULE),
    name: z.string().min(1, 'must not be empty').max(80),
    version: z.string().min(1, 'must not be empty').max(64),
    description: z.string().max(1024).default(''),
    auth: auth.default({ kind: 'none' }),
    config: z.array(setting).max(32).default([]),
    npm: npmOptions.default({ scripts: false }),
    mcp: mcpServer.optional(),
    cli: z.strictObject({ entrypoint: relativePath }).optional(),
    skills: relativePath.optional(),
  })
  .superRefine((m, ctx) => {
    const declaredTools = declaredToolsOf(m.mcp)
    if (m.mcp && m.mcp.activation === 'lazy' && !declaredTools?.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['mcp', 'tools'],
        message: 'lazy activation requires a non-empty tools declaration',
      })
    }
    const seen = new Set<string>()
    const checkName = (name: string, path: (string | number)[]): void => {
      if (name.startsWith(RESERVED_VAR_PREFIX))
        ctx.addIssue({ code: 'custom', path, message: 'names starting with TUTTI_ are reserved' })
      else if (seen.has(name))
        ctx.addIssue({
          code: 'custom',
          path,
          message: `duplicate variable ${name} (auth variables and config settings share one namespace)`,
        })
      seen.add(name)
    }
    if (m.auth.kind === 'env') m.auth.variables.forEach((v, i) => checkName(v.name, ['auth', 'variables', i, 'name']))
    m.config.forEach((c, i) => {
      checkName(c.name, ['config', i, 'name'])
      for (const match of (c.default ?? '').matchAll(VAR_REF)) {
        if (match[1] !== DATA_DIR_VAR)
          ctx.addIssue({
            code: 'custom',
            path: ['config', i, 'default'],
            message: `only \${${DATA_DIR_VAR}} expands in a default, not \${${match[1]}}`,
          })
      }
    })
    const names = new Set<string>()
    declaredTools?.forEach((tool, i) => {
      const at = declaredToolPath(m.mcp!, i)
      if (names.has(tool.name))
        ctx.addIssue({ code: 'custom', path: [...at, 'name'], message: `duplicate tool name "${tool.name}"` })
      names.add(tool.name)
      // the registry's limits, checked here so a declaration past them is an install error, not a failed connector
      for (const field of ['inputSchema', 'outputSchema', 'annotations'] as const) {
        if (nestsDeeperThan(tool[field], TOOL_TABLE_LIMITS.maxSchemaDepth)) {
          ctx.addIssue({
            code: 'custom',
            path: [...at, field],
            message: `nests deeper than ${TOOL_TABLE_LIMITS.maxSchemaDepth} levels`,
          })
          return
        }
      }
      const bytes = JSON.stringify(tool).length
      if (bytes > TOOL_TABLE_LIMITS.maxToolBytes)
        ctx.addIssue({
          code: 'custom',
          path: at,
          message: `${bytes} bytes, more than the limit of ${TOOL_TABLE_LIMITS.maxToolBytes}`,
        })
    })
    const declared = new Set([DATA_DIR_VAR, RELEASE_ROOT_VAR, ...seen])
    const checkRefs = (value: string, path: (string | number)[]): void => {
      for (const match of value.matchAll(VAR_REF)) {
        if (!declared.has(match[1]!)) {
          ctx.addIssue({
            code: 'custom',
            path,
            message:
              `\${${match[1]}} is not a declared auth variable or config setting ` +
              `(only those, \${${DATA_DIR_VAR}} and \${${RELEASE_ROOT_VAR}} expand)`,
          })
        }
      }
    }
    if (m.mcp?.transport === 'stdio') {
      // argv is world-readable (`ps`, /proc/<pid>/cmdline): a secret may only reach the server through its environment
      const secrets = new Set(m.auth.kind === 'env' ? m.auth.variables.filter((v) => v.secret).map((v) => v.name) : [])
      m.mcp.args.forEach((a, i) => {
        checkRefs(a, ['mcp', 'args', i])
        for (const match of a.matchAll(VAR_REF)) {
          if (secrets.has(match[1]!))
            ctx.addIssue({
              code: 'custom',
              path: ['mcp', 'args', i],
              message:
                `\${${match[1]}} is a secret auth variable and must not be in the server's arguments, which ` +
                `any local user can read in \`ps\`; pass it through mcp.env (a declared variable reaches the ` +
                `server's environment under its own name), or mark it "secret": false if it is not one`,
            })
        }
      })
      for (const [k, v] of Object.entries(m.mcp.env)) checkRefs(v, ['mcp', 'env', k])
    } else if (m.mcp?.transport === 'http') {
      checkRefs(m.mcp.url, ['mcp', 'url'])
      for (const [k, v] of Object.entries(m.mcp.headers)) checkRefs(v, ['mcp', 'headers', k])
    }
    if (m.auth.kind === 'oauth' && m.mcp?.transport !== 'http') {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'kind'],
        message: '"oauth" signs in to a remote server: it needs mcp.transport "http"',
      })
    }
    if (!m.mcp && !m.cli && !m.skills) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'a connector must bring at least one of "mcp", "cli" or "skills"',
      })
    }
  })

export type ConnectorManifest = z.infer<typeof manifestSchema>

/** Replace `${VAR}` by the declared auth variable's value (validated to be declared). */
export function expandVariables(value: string, vars: Readonly<Record<string, string>>): string {
  return value.replace(VAR_REF, (_m, name: string) => vars[name] ?? '')
}

export function authVariableNames(m: ConnectorManifest): string[] {
  return m.auth.kind === 'env' ? m.auth.variables.map((v) => v.name) : []
}

export function settingNames(m: ConnectorManifest): string[] {
  return m.config.map((c) => c.name)
}

/** Settings kept with the credentials and never shown: marked secret, or named like a credential. */
export function secretSettingNames(m: ConnectorManifest): string[] {
  return m.config.filter((c) => isCredential(c.name, { markedSecret: c.secret === true })).map((c) => c.name)
}

/**
 * The stored value of every setting: a secret one from the credentials, else (installs from before
 * secret settings) from installed.json; any other from installed.json.
 */
export function storedSettings(
  m: ConnectorManifest,
  installed: Readonly<Record<string, string>> | undefined,
  credentials: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = { ...installed }
  for (const name of secretSettingNames(m)) if (credentials[name] !== undefined) out[name] = credentials[name]
  return out
}

/** The settings a status may show: every resolved one but the secret ones. */
export function publicSettings(
  m: ConnectorManifest,
  resolved: Readonly<Record<string, string>>,
): Record<string, string> {
  const secret = new Set(secretSettingNames(m))
  return Object.fromEntries(Object.entries(resolved).filter(([name]) => !secret.has(name)))
}

/**
 * The value of every declared setting: the stored one, else its default
 * (with `${TUTTI_CONNECTOR_DATA}` expanded), else unset.
 */
export function resolveSettings(
  m: ConnectorManifest,
  stored: Readonly<Record<string, string>> | undefined,
  dataDir: string,
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const c of m.config) {
    const value =
      stored?.[c.name] ??
      (c.default === undefined ? undefined : expandVariables(c.default, { [DATA_DIR_VAR]: dataDir }))
    if (value !== undefined) out[c.name] = value
  }
  return out
}

/** Required auth variables that have no stored value (an optional one never gates readiness). */
export function missingCredentials(
  m: ConnectorManifest,
  credentials: Readonly<Record<string, string>> | undefined,
): string[] {
  const required = m.auth.kind === 'env' ? m.auth.variables.filter((v) => v.required !== false).map((v) => v.name) : []
  return required.filter((name) => !(typeof credentials?.[name] === 'string' && credentials[name] !== ''))
}

/** Active iff auth is ready: no auth, or every declared variable has a value. */
export function isAuthReady(m: ConnectorManifest, credentials: Readonly<Record<string, string>> | undefined): boolean {
  return missingCredentials(m, credentials).length === 0
}
