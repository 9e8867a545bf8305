import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import { MANIFEST_FILE } from '../names.js'
import { ARCHIVE, unpackArchive } from '../store/unpack-archive.js'
import type { GeneratedSource, SourceOptions } from './generated-source.js'
import { fetchNpmPackage } from './npm-fetch.js'
import { npmPackageSource, readPackageJson } from './npm-package-source.js'
import { detectPlugin, pluginSource } from './plugin-source.js'
import { serverJsonSource } from './server-json-source.js'
import { commandSource, HEADER_NOT_STDIO } from './command-source.js'
import { isUrlSource, urlSource } from './url-source.js'

/**
 * Any `<source>` of `connector install` as a directory that is, or is about
 * to be, a tutti release: a tutti release (dir or .tgz) as it is; an npm
 * package (`npm:`, dir or .tgz) with one bin; a Claude Code, Codex or Agent
 * Plugins package; an MCP Registry server.json. Everything fetched or
 * unpacked goes under `options.scratchDir()`, and `cleanup` removes it.
 */
export interface PreparedSource {
  /** The release directory (for a generated manifest: not written yet). */
  root: string
  /** Set when the source had no tutti manifest. */
  generated?: GeneratedSource
  cleanup: () => Promise<void>
}

export const NPM_PREFIX = 'npm:'

const isFile = (p: string) =>
  fs.stat(p).then(
    (s) => s.isFile(),
    () => false,
  )

/** `source` undefined: the command form, `options.command`. */
export async function prepareSource(source: string | undefined, options: SourceOptions): Promise<PreparedSource> {
  const cleanups: Array<() => Promise<void>> = []
  const cleanup = async () => {
    // temporary copies under tmp/: a leftover is removed by the next install, and must not hide the outcome
    for (const c of cleanups.reverse()) await c().catch(() => undefined)
  }
  const unpack = async (archive: string): Promise<string> => {
    const unpacked = await unpackArchive(archive, await options.scratchDir())
    cleanups.push(unpacked.cleanup)
    return unpacked.root
  }
  const fetchNpm = async (spec: string): Promise<string> => {
    const dir = await fs.mkdtemp(path.join(await options.scratchDir(), 'npm-'))
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
    return unpack(await fetchNpmPackage(spec, dir, options.env))
  }
  // a source that is only a generated manifest: its directory goes with the install's scratch
  const bare = async (generated: GeneratedSource): Promise<PreparedSource> => {
    cleanups.push(() => fs.rm(generated.root, { recursive: true, force: true }))
    return { root: generated.root, generated, cleanup }
  }
  try {
    if (source === undefined) return await bare(await commandSource(options))
    if (options.command?.length) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, 'a source and a command: give one')
    if (isUrlSource(source)) return await bare(await urlSource(source, options))
    if (options.headers?.length) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, HEADER_NOT_STDIO)
    let root: string
    if (source.startsWith(NPM_PREFIX)) root = await fetchNpm(source.slice(NPM_PREFIX.length))
    else if (ARCHIVE.test(source)) root = await unpack(source)
    else if (source.endsWith('.json') && (await isFile(source))) {
      return await bare(await serverJsonSource(source, options, fetchNpm))
    } else root = source
    const generated = await describe(root, options)
    if (!generated) {
      // these shape a generated manifest; a release that brings its own would silently ignore them
      if (options.key !== undefined)
        throw new TuttiError(
          ErrorCodes.ARGUMENT_INVALID,
          `--key: this release names its key in ${MANIFEST_FILE}; --key is for packages without one`,
        )
      if (options.server !== undefined)
        throw new TuttiError(
          ErrorCodes.ARGUMENT_INVALID,
          `--server: this release declares its one MCP server in ${MANIFEST_FILE}; --server is for plugins and ` +
            `server.json documents with several`,
        )
    }
    return { root, ...(generated ? { generated } : {}), cleanup }
  } catch (err) {
    await cleanup()
    throw err
  }
}

/** undefined for a tutti release; otherwise the manifest the package maps to. */
async function describe(root: string, options: SourceOptions): Promise<GeneratedSource | undefined> {
  // a root that cannot be stat'ed goes to the release loader, which says why
  const st = await fs.stat(root).catch(() => undefined)
  if (!st?.isDirectory()) return undefined // the release loader says what is wrong with it
  if (await isFile(path.join(root, MANIFEST_FILE))) {
    if (options.args?.length)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `arguments after "--" are for packages without a ${MANIFEST_FILE}; this release declares its own`,
      )
    return undefined
  }
  const plugin = await detectPlugin(root)
  if (plugin) return pluginSource(root, plugin, options)
  const pkg = await readPackageJson(root)
  if (pkg) return npmPackageSource(root, pkg, options)
  throw new TuttiError(
    ErrorCodes.MANIFEST_NOT_FOUND,
    `${root}: no ${MANIFEST_FILE}, no plugin manifest (.claude-plugin/plugin.json, .codex-plugin/plugin.json, ` +
      `plugin.json) and no package.json: nothing here says how to run it`,
  )
}
