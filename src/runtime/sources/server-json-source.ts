import fs from 'node:fs/promises'
import path from 'node:path'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import { sourceIdentity } from '../store/source-identity.js'
import { chooseServer, type GeneratedSource, type SourceOptions } from './generated-source.js'
import { npmPackageSource, readPackageJson } from './npm-package-source.js'
import { ServerJsonInputs } from './server-json-inputs.js'
import { readSourceJson } from './source-json.js'
import {
  serverJsonSchema,
  type ServerJson,
  type ServerJsonPackage,
  type ServerJsonRemote,
} from './server-json-schema.js'
import { deriveKey } from './source-key.js'

/**
 * An MCP Registry `server.json` as a connector: an npm package entry is
 * fetched and installed like `npm:`, other registries run through their
 * runtime (uvx, docker, dnx) when it is on the installing PATH, and a
 * Streamable HTTP remote becomes an http connector.
 */
type Entry =
  | { kind: 'packages'; at: string; entry: ServerJsonPackage }
  | { kind: 'remotes'; at: string; entry: ServerJsonRemote }

/**
 * The runtimes each registry's packages run with, the default first. A
 * runtimeHint must be one of these bare names exactly: it becomes the
 * command, so anything else (`sh`, `/bin/sh`, `../npx`) would run a program
 * the registry type never implied.
 */
const RUNTIMES: Record<string, readonly string[]> = {
  npm: ['npx', 'node'],
  pypi: ['uvx', 'python'],
  oci: ['docker', 'podman'],
  nuget: ['dnx', 'dotnet'],
}
/** Runtimes that take docker's `run -i --rm -e NAME … image:tag` (podman's CLI is docker's). */
const CONTAINER_RUNTIMES = new Set(['docker', 'podman'])

/** The fields of an entry tutti reads; any other is listed under skipped, with REASONS' reason where it has one. */
const KNOWN_FIELDS = {
  packages: [
    'registryType',
    'identifier',
    'version',
    'runtimeHint',
    'runtimeArguments',
    'packageArguments',
    'environmentVariables',
    'transport',
  ],
  remotes: ['type', 'url', 'headers', 'variables'],
}
const REASONS: Record<string, string> = {
  registryBaseUrl: 'the package is fetched from the registry your npm (or runtime) is configured with',
  fileSha256: 'tutti does not check a file digest; npm checks the package integrity it publishes',
}

function unknownFields(entry: Record<string, unknown>, kind: keyof typeof KNOWN_FIELDS, at: string): string[] {
  const known = new Set(KNOWN_FIELDS[kind])
  const fields = Object.keys(entry).filter((f) => !known.has(f))
  return fields.map((f) => `${at}.${f}: ${REASONS[f] ?? 'not a field tutti knows; it is not carried'}`)
}

const invalid = (message: string) => new TuttiError(ErrorCodes.MANIFEST_INVALID, `server.json: ${message}`)

export async function readServerJson(file: string): Promise<ServerJson> {
  const data = await readSourceJson(file, file.endsWith('server.json') ? 'server.json' : file)
  const result = serverJsonSchema.safeParse(data)
  if (!result.success) {
    const issue = result.error.issues[0]!
    throw invalid(`${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
  }
  return result.data
}

/**
 * Every server the document offers, by a short name for `--server`: its registry type, or a remote's transport type
 * (numbered when repeated).
 */
function entries(doc: ServerJson): Map<string, Entry> {
  const out = new Map<string, Entry>()
  const add = (base: string, e: Entry) => {
    let name = base
    for (let n = 2; out.has(name); n++) name = `${base}-${n}`
    out.set(name, e)
  }
  doc.packages?.forEach((p, i) => add(p.registryType, { kind: 'packages', at: `packages.${i}`, entry: p }))
  doc.remotes?.forEach((r, i) => add(r.type, { kind: 'remotes', at: `remotes.${i}`, entry: r }))
  return out
}

const chooseEntry = (doc: ServerJson, server: string | undefined) =>
  chooseServer('server.json', entries(doc), server, (m) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, m))[1]

/**
 * The npm package a server.json connector runs, for `connector outdated`:
 * its registry is npm's, so its newer versions are the package's. A
 * string: why the entry cannot be compared (it is a remote, or another
 * registry's package).
 */
export async function serverJsonNpmPackage(
  file: string,
  server: string | undefined,
): Promise<{ identifier: string; version?: string } | string> {
  const chosen = chooseEntry(await readServerJson(file), server)
  if (chosen.kind === 'remotes') return `${chosen.at} is a remote server; its version is the server's own`
  const { registryType, identifier, version } = chosen.entry
  if (registryType !== 'npm') return `${chosen.at} is a ${registryType} package; only npm packages are compared`
  return { identifier, ...(version !== undefined ? { version } : {}) }
}

/** `fetchNpm` gives the unpacked package directory of an npm spec. */
export async function serverJsonSource(
  file: string,
  options: SourceOptions,
  fetchNpm: (spec: string) => Promise<string>,
): Promise<GeneratedSource> {
  const doc = await readServerJson(file)
  const chosen = chooseEntry(doc, options.server)
  const inputs = new ServerJsonInputs()
  // an update's newer package is the version that serves, whatever the document says
  const update = chosen.kind === 'packages' && chosen.entry.registryType === 'npm' ? options.packageVersion : undefined
  const version = (update ?? doc.version).slice(0, 64)
  const base = {
    schemaVersion: 1,
    key: deriveKey(doc.name, options.key),
    name: (doc.title ?? doc.name).slice(0, 80),
    version,
    description: doc.description.slice(0, 1024),
  }
  const skipped: string[] = unknownFields(chosen.entry, chosen.kind, chosen.at)
  // the document's name is the server's identity, whichever of its entries runs
  const source = sourceIdentity('server.json', doc.name)
  if (chosen.kind === 'remotes') {
    const remote = chosen.entry
    if (remote.type === 'sse')
      throw invalid(
        `${chosen.at}: the SSE transport is not supported; tutti reaches remote servers over Streamable HTTP`,
      )
    if (options.args?.length)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `arguments after "--" are for servers tutti starts; ${chosen.at} is a remote server`,
      )
    const url = remote.url.replace(/\{([A-Za-z0-9_-]+)\}/g, (whole, v: string) => {
      const variable = remote.variables?.[v]
      return variable ? (variable.value ?? inputs.declare(ServerJsonInputs.envName(v), variable, 'url')) : whole
    })
    const headers: Record<string, string> = {}
    for (const h of remote.headers ?? []) headers[h.name] = inputs.value(h, h.name, 'header')
    const root = await fs.mkdtemp(path.join(await options.scratchDir(), 'server-json-'))
    const manifest = { ...base, ...inputs.manifestParts(), mcp: { transport: 'http', url, headers } }
    return { root, manifest, kind: 'server.json remote', source, skipped, notes: inputs.warnings }
  }
  const pkg = chosen.entry
  if (pkg.transport.type !== 'stdio')
    throw invalid(
      `${chosen.at}: a package served over ${pkg.transport.type} is not supported; tutti runs packages over stdio`,
    )
  const runtime = runtimeOf(pkg, chosen.at)
  const packageArgs = inputs.arguments(pkg.packageArguments)
  const env = inputs.environment(pkg.environmentVariables)
  if (pkg.registryType === 'npm' && (runtime === 'npx' || runtime === 'node')) {
    if (runtime === 'npx' && pkg.runtimeArguments?.length)
      skipped.push(
        `runtimeArguments for npx (${pkg.runtimeArguments.length}): ` +
          `the package is installed into the release and run without npx`,
      )
    const nodeArgs = runtime === 'node' ? inputs.arguments(pkg.runtimeArguments) : []
    const pinned = update ?? pkg.version
    const root = await fetchNpm(pinned ? `${pkg.identifier}@${pinned}` : pkg.identifier)
    const npmPkg = (await readPackageJson(root)) ?? {}
    const generated = await npmPackageSource(root, npmPkg, {
      ...options,
      key: base.key,
      server: undefined,
      packageArgs,
      nodeArgs,
    })
    const mcp = { ...(generated.manifest.mcp as Record<string, unknown>), ...(Object.keys(env).length ? { env } : {}) }
    const manifest = { ...base, ...inputs.manifestParts(), mcp }
    return { root, manifest, kind: 'server.json npm package', source, skipped, notes: inputs.warnings }
  }
  if (!(await which(runtime, { path: options.env.PATH ?? '', nothrow: true }))) {
    throw new TuttiError(
      ErrorCodes.COMMAND_NOT_FOUND,
      `server.json: ${chosen.at} (${pkg.registryType} ${pkg.identifier}) runs with ${runtime}, ` +
        `and ${runtime} is not on this shell's PATH; install ${runtime}, or choose another entry with --server`,
    )
  }
  const runtimeArgs = inputs.arguments(pkg.runtimeArguments)
  const container = CONTAINER_RUNTIMES.has(runtime)
  const ref = pkg.version ? `${pkg.identifier}${container ? ':' : '@'}${pkg.version}` : pkg.identifier
  const extra = options.args ?? []
  const args = container
    ? [
        'run',
        '-i',
        '--rm',
        ...Object.keys({
          ...env,
          ...Object.fromEntries([...inputs.variables.keys(), ...inputs.config.keys()].map((k) => [k, ''])),
        }).flatMap((k) => ['-e', k]),
        ...runtimeArgs,
        ref,
        ...packageArgs,
        ...extra,
      ]
    : runtime === 'dnx'
      ? [...runtimeArgs, ref, '--yes', ...(packageArgs.length || extra.length ? ['--', ...packageArgs, ...extra] : [])]
      : [...runtimeArgs, ref, ...packageArgs, ...extra]
  const root = await fs.mkdtemp(path.join(await options.scratchDir(), 'server-json-'))
  const mcp = { transport: 'stdio', command: runtime, args, ...(Object.keys(env).length ? { env } : {}) }
  const manifest = { ...base, ...inputs.manifestParts(), mcp }
  return { root, manifest, kind: `server.json ${pkg.registryType} package`, source, skipped, notes: inputs.warnings }
}

/**
 * The command a package runs with: its registry type's default, or a runtimeHint that is one of that type's runtimes.
 */
function runtimeOf(pkg: ServerJsonPackage, at: string): string {
  const runtimes = RUNTIMES[pkg.registryType]
  if (!runtimes)
    throw invalid(
      `${at}: registryType "${pkg.registryType}" is not supported (${Object.keys(RUNTIMES).join(', ')} are)`,
    )
  if (pkg.runtimeHint === undefined) return runtimes[0]!
  if (runtimes.includes(pkg.runtimeHint)) return pkg.runtimeHint
  const hint = JSON.stringify(pkg.runtimeHint.slice(0, 64))
  throw invalid(
    `${at}.runtimeHint ${hint} is not a runtime for registryType "${pkg.registryType}" ` +
      `(expected ${runtimes.join(' or ')})`,
  )
}
