import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import { looksLikeCredential } from '../manifest/credential-names.js'
import type { GivenKey } from '../manifest/given-keys.js'
import { RESERVED_VAR_PREFIX } from '../names.js'
import { sourceIdentity } from '../store/source-identity.js'
import type { GeneratedSource, SourceOptions } from './generated-source.js'
import { deriveKey } from './source-key.js'

/**
 * `install https://host/mcp [--header "Name: value"]…`: a remote MCP server
 * as `claude mcp add --transport http` takes it. Every header value is a
 * credential: it goes to the 0600 store, and the manifest's header says
 * `${NAME}`. A key-like query parameter (`?api_key=…`) is one too.
 */
export const isUrlSource = (source: string): boolean => /^https?:\/\//i.test(source)

/** Host labels that say "an MCP endpoint" and nothing about whose. */
const HOST_NOISE = new Set(['mcp', 'api', 'www'])
/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** A `${NAME}` the user wrote in a header value (single-quoted in the shell). */
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

const invalid = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

/**
 * The key from the host: its main label, without the top-level domain
 * (and a short second level, as in co.uk) and without mcp/api/www labels:
 * `mcp.linear.app` is "linear". An IP address names nothing: `--key`.
 */
export function urlKey(url: URL, override?: string): string {
  if (override !== undefined) return deriveKey('', override)
  const host = url.hostname.replace(/\.$/, '')
  if (/^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[')) {
    throw invalid(`${url.origin}: an IP address names no connector; choose its key with --key NAME`)
  }
  const labels = host.toLowerCase().split('.')
  if (labels.length > 1) labels.pop()
  if (labels.length > 1 && labels.at(-1)!.length <= 3 && /^[a-z]{2}$/.test(host.split('.').pop()!)) labels.pop()
  const named = labels.filter((l) => !HOST_NOISE.has(l))
  return deriveKey(named.at(-1) ?? labels.at(-1) ?? host)
}

/** A variable name for a header or query parameter: `X-Api-Key` is X_API_KEY. */
function variableName(name: string): string {
  let v = name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
  if (!/^[A-Z_]/.test(v)) v = `H_${v}`
  return v.startsWith(RESERVED_VAR_PREFIX) ? `HEADER_${v}` : v
}

export async function urlSource(source: string, options: SourceOptions): Promise<GeneratedSource> {
  let url: URL
  try {
    url = new URL(source)
  } catch {
    throw invalid(`${source.slice(0, 200)}: not a valid URL`)
  }
  if (url.username || url.password) {
    throw invalid(`${url.host}: credentials in the URL would be shown in status; use --header "Authorization: …"`)
  }
  if (options.args?.length || options.command?.length) {
    throw invalid('a remote server takes no arguments after "--"; headers go in --header "Name: value"')
  }
  const key = urlKey(url, options.key)
  const keys: GivenKey[] = []
  const variables = new Map<string, { name: string; secret: true }>()
  const declare = (name: string) => variables.set(name, { name, secret: true })
  const headers: Record<string, string> = {}
  for (const line of options.headers ?? []) {
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon).trim() : ''
    const value = colon > 0 ? line.slice(colon + 1).trim() : ''
    if (!HEADER_NAME.test(name)) {
      const shown = JSON.stringify(name.slice(0, 64) || line.slice(0, 16))
      throw invalid(`--header ${shown}: expects "Name: value" with a header name before the colon`)
    }
    if (!value) throw invalid(`--header ${name}: the value is empty`)
    const twice = Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase())
    if (twice) throw invalid(`--header ${name} is given twice`)
    const refs = [...value.matchAll(REF)].map((m) => m[1]!)
    if (refs.length) {
      // the user's own template: the values come from --env/--secret/--from-env, or later from connect
      refs.forEach(declare)
      headers[name] = value
    } else {
      const variable = variableName(name)
      if (variables.has(variable)) throw invalid(`--header ${name}: its variable ${variable} is taken by another`)
      declare(variable)
      keys.push({ name: variable, value, secret: true, flag: `--header ${name}` })
      headers[name] = `\${${variable}}`
    }
  }
  for (const [param, value] of [...url.searchParams]) {
    if (!looksLikeCredential(param) || value.includes('${')) continue
    const variable = variableName(param)
    declare(variable)
    keys.push({ name: variable, value, secret: true, flag: `the URL's ${param}` })
    url.searchParams.set(param, `__${variable}__`)
  }
  const where = `${url.origin}${url.pathname}`
  const manifest: Record<string, unknown> = {
    schemaVersion: 1,
    key,
    name: url.host.slice(0, 80),
    version: '0.0.0',
    description: `the remote MCP server at ${where}`.slice(0, 1024),
    ...(variables.size ? { auth: { kind: 'env', variables: [...variables.values()] } } : {}),
    mcp: { transport: 'http', url: url.href.replace(/__([A-Z0-9_]+)__/g, '${$1}'), headers },
  }
  // the release holds nothing but the manifest tutti writes into it
  const root = await fs.mkdtemp(path.join(await options.scratchDir(), 'url-'))
  return { root, manifest, kind: 'remote server', source: sourceIdentity('remote server', where), skipped: [], keys }
}
