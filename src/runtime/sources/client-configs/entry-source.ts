import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../../errors.js'
import { isCredential } from '../../manifest/credential-names.js'
import { sourceIdentity } from '../../store/source-identity.js'
import type { GeneratedSource } from '../generated-source.js'
import { pluginServerSchema, PluginServerMapper } from '../plugin-mcp-config.js'
import { ServerJsonInputs } from '../server-json-inputs.js'
import { deriveKey } from '../source-key.js'
import { isRecord, type ClientEntry } from './client-entry.js'

/**
 * One client config entry as a connector: the entry goes through the plugin
 * mapper, then every variable it names is classified with `isCredential()`.
 * A literal secret in the config (`"GITHUB_TOKEN": "ghp_…"`, any header
 * value) becomes a declared credential whose value is returned to be
 * stored, never written into the manifest; another literal becomes a
 * setting with that value.
 */
export interface ImportedSource {
  generated: GeneratedSource
  /** Credential values the config held literally, for the 0600 store. */
  credentials: Record<string, string>
}

/** Why a field clients have is not carried (a field not listed: "tutti does not carry it"). */
const FIELD_REASONS: Record<string, string> = {
  timeout: 'tutti applies its own timeouts',
  trust: 'tool calls go through the agent, which asks for confirmation as it does for any tool',
  envFile: 'the env file is not read: set its variables with `tutti connector connect KEY --env NAME=VALUE`',
  headersHelper: 'a header helper command is not run: pass the header with `tutti connector connect`',
  oauth: "the client's OAuth settings are not carried: `tutti connector connect` signs in",
  description: 'tutti describes a connector by its manifest',
}

const GEMINI_TOOL_FILTERS = [
  ['includeTools', 'enabled_tools'],
  ['excludeTools', 'disabled_tools'],
] as const

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g
const refsIn = (values: readonly string[]) => new Set(values.flatMap((v) => [...v.matchAll(REF)].map((m) => m[1]!)))
const relative = (p: string) => p.startsWith('./') || p.startsWith('../')

/** The entry's outcome names the entry and its file; the message says what is wrong with it. */
function failure(_entry: ClientEntry, message: string): TuttiError {
  return new TuttiError(ErrorCodes.MANIFEST_INVALID, message)
}

export async function entrySource(
  entry: ClientEntry,
  kind: string,
  options: { key?: string; scratchDir: () => Promise<string> },
): Promise<ImportedSource> {
  if (entry.problem) throw failure(entry, entry.problem)
  if (!isRecord(entry.server)) throw failure(entry, 'must be an object')
  const raw: Record<string, unknown> = { ...entry.server }
  const remote = raw.command === undefined && raw.url !== undefined
  if (remote && raw.type === undefined) raw.type = 'http'
  // Gemini CLI's timeout bounds a request in ms: tutti's tool-call timeout (Codex's tool_timeout_sec)
  if (kind === 'Gemini CLI config' && typeof raw.timeout === 'number' && raw.timeout > 0) {
    raw.tool_timeout_sec ??= raw.timeout / 1000
    delete raw.timeout
  }
  // Gemini CLI's tool filters are Codex's: only these, and these left out (which wins)
  if (kind === 'Gemini CLI config') {
    for (const [from, to] of GEMINI_TOOL_FILTERS) {
      if (raw[from] === undefined) continue
      raw[to] = raw[from]
      delete raw[from]
    }
  }
  if (raw.type === 'sse')
    throw failure(entry, 'the SSE transport is not supported; tutti reaches remote servers over Streamable HTTP')
  const skipped = [...entry.skipped]
  // what the mapper's schema does not know would be dropped by it without a word
  const option = pluginServerSchema.options.find((o) => (remote ? 'url' : 'command') in o.shape)
  for (const field of Object.keys(raw)) {
    if (option && !(field in option.shape)) {
      skipped.push(`"${field}": ${FIELD_REASONS[field] ?? 'tutti does not carry it'}`)
      delete raw[field]
    }
  }
  const credentials: Record<string, string> = {}
  const literalSettings = new Map<string, string>()
  if (isRecord(raw.env)) {
    const env: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(raw.env)) {
      const literal =
        typeof value === 'string' && !value.includes('${') && ENV_NAME.test(name) && !name.startsWith('TUTTI_')
      env[name] = literal ? `\${${name}}` : value
      if (literal && isCredential(name)) {
        if (value !== '') credentials[name] = value
      } else if (literal) literalSettings.set(name, value)
    }
    raw.env = env
  }
  const headerNames = new Set<string>()
  if (isRecord(raw.headers)) {
    const headers: Record<string, unknown> = {}
    for (const [header, value] of Object.entries(raw.headers)) {
      if (typeof value !== 'string' || value.includes('${')) {
        headers[header] = value
        continue
      }
      const name = ServerJsonInputs.envName(header)
      headerNames.add(name)
      headers[header] = `\${${name}}`
      if (value !== '') credentials[name] = value
    }
    raw.headers = headers
  }
  // the client runs a server in its project (or its cwd): a relative path there is made absolute
  const base = typeof raw.cwd === 'string' && entry.baseDir ? path.resolve(entry.baseDir, raw.cwd) : entry.baseDir
  if (base) {
    if (typeof raw.command === 'string' && relative(raw.command)) raw.command = path.resolve(base, raw.command)
    if (Array.isArray(raw.args))
      raw.args = raw.args.map((a) => (typeof a === 'string' && relative(a) ? path.resolve(base, a) : a))
  }
  const parsed = pluginServerSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw failure(entry, `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
  }
  const mapped = new PluginServerMapper().toTutti(parsed.data, [])
  skipped.push(...mapped.skipped)
  const mcp = mapped.mcp as { args?: string[]; url?: string; headers?: Record<string, string> }
  const inPublic = refsIn([...(mcp.args ?? []), ...(mcp.url !== undefined ? [mcp.url] : [])])
  const inHeaders = new Set([...headerNames, ...refsIn(Object.values(mcp.headers ?? {}))])
  const defaults = new Map(
    mapped.config.flatMap((c) => (c.default !== undefined ? [[c.name, c.default] as const] : [])),
  )
  const variables: Array<Record<string, unknown>> = []
  const config: Array<Record<string, unknown>> = []
  for (const name of new Set([...mapped.variables.map((v) => v.name), ...mapped.config.map((c) => c.name)])) {
    const input = entry.inputs.find((i) => i.name === name)
    const description = input?.description ? { description: input.description } : {}
    if (
      name in credentials ||
      isCredential(name, { markedSecret: input?.markedSecret === true, header: inHeaders.has(name) })
    ) {
      // argv and URLs are readable by others (`ps`, logs): a credential goes only in the environment or a header
      if (inPublic.has(name))
        throw failure(
          entry,
          `${name} is a credential, and the entry passes it in the server's ${remote ? 'URL' : 'arguments'}, ` +
            `which others can read; tutti passes credentials only in the environment or a header`,
        )
      const fallback = defaults.get(name)
      if (!(name in credentials) && fallback) credentials[name] = fallback
      variables.push({ name, secret: true, ...description })
    } else {
      const value = literalSettings.get(name) ?? defaults.get(name)
      config.push({ name, ...(value !== undefined ? { default: value } : {}), ...description })
    }
  }
  const manifest: Record<string, unknown> = {
    schemaVersion: 1,
    key: deriveKey(entry.name, options.key),
    name: entry.name.slice(0, 80),
    version: '0.0.0',
    description: `${entry.name}, imported from ${entry.origin}`.slice(0, 1024),
    ...(variables.length ? { auth: { kind: 'env', variables } } : {}),
    ...(config.length ? { config } : {}),
    mcp: mapped.mcp,
  }
  const root = await fs.mkdtemp(path.join(await options.scratchDir(), 'client-config-'))
  return { generated: { root, manifest, kind, source: sourceIdentity(kind, entry.name), skipped }, credentials }
}
