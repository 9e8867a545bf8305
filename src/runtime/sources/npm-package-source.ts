import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { GeneratedSource, SourceOptions } from './generated-source.js'
import { sourceIdentity } from '../store/source-identity.js'
import { readSourceJson } from './source-json.js'
import { deriveKey } from './source-key.js'

/**
 * An npm package without a tutti manifest whose package.json names one
 * `bin`: a stdio MCP server, run as that bin (under node when it is
 * JavaScript) from the release, with its dependencies installed into it.
 */
export interface NpmPackageJson {
  name?: unknown
  version?: unknown
  description?: unknown
  bin?: unknown
}

export async function readPackageJson(root: string): Promise<NpmPackageJson | undefined> {
  const value = await readSourceJson(path.join(root, 'package.json'), 'package.json', { optional: true })
  return value && typeof value === 'object' ? (value as NpmPackageJson) : undefined
}

/** The package's bins as name → release path. */
export function binsOf(pkg: NpmPackageJson): Map<string, string> {
  const name = typeof pkg.name === 'string' ? pkg.name.split('/').pop()! : 'bin'
  if (typeof pkg.bin === 'string') return new Map([[name, pkg.bin]])
  const bins = new Map<string, string>()
  if (pkg.bin && typeof pkg.bin === 'object')
    for (const [k, v] of Object.entries(pkg.bin)) if (typeof v === 'string') bins.set(k, v)
  return bins
}

/** How to run a file of the release: JavaScript under node (npm's bin shims do the same), anything else as itself. */
export async function runBin(root: string, bin: string): Promise<{ command: string; args: string[] }> {
  const rel = path.posix.normalize(bin.replace(/\\/g, '/')).replace(/^\.\//, '')
  const head = await fs.readFile(path.join(root, rel), 'utf8').then(
    (t) => t.slice(0, 128),
    () => {
      throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `package.json: bin "${bin}" does not exist in the package`)
    },
  )
  const javascript = /\.[cm]?js$/.test(rel) || /^#!.*\bnode\b/.test(head) || !head.startsWith('#!')
  return javascript ? { command: 'node', args: [rel] } : { command: rel, args: [] }
}

export async function npmPackageSource(
  root: string,
  pkg: NpmPackageJson,
  options: SourceOptions & { packageArgs?: string[]; nodeArgs?: string[]; manifestExtra?: Record<string, unknown> },
): Promise<GeneratedSource> {
  const name = typeof pkg.name === 'string' ? pkg.name : path.basename(root)
  const bins = binsOf(pkg)
  if (bins.size === 0)
    throw new TuttiError(
      ErrorCodes.MANIFEST_NOT_FOUND,
      `${name} has no tutti-connector.json, no plugin manifest and no "bin" in package.json: ` +
        `it is not an MCP server tutti can run`,
    )
  let bin: string
  if (bins.size === 1) bin = [...bins.values()][0]!
  else if (options.server !== undefined && bins.has(options.server)) bin = bins.get(options.server)!
  else {
    const names = [...bins.keys()].join(', ')
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      options.server !== undefined
        ? `${name} has no bin "${options.server}"; its bins: ${names}`
        : `${name} has ${bins.size} bins (${names}); choose the MCP server with --server NAME`,
    )
  }
  const run = await runBin(root, bin)
  const args = [
    ...(run.command === 'node' ? (options.nodeArgs ?? []) : []),
    ...run.args,
    ...(options.packageArgs ?? []),
    ...(options.args ?? []),
  ]
  const manifest: Record<string, unknown> = {
    schemaVersion: 1,
    key: deriveKey(name, options.key),
    name: name.slice(0, 80),
    version: typeof pkg.version === 'string' ? pkg.version : '0.0.0',
    description: typeof pkg.description === 'string' ? pkg.description.slice(0, 1024) : '',
    mcp: { transport: 'stdio', command: run.command, args },
    ...options.manifestExtra,
  }
  return { root, manifest, kind: 'npm package', source: sourceIdentity('npm package', name), skipped: [] }
}
