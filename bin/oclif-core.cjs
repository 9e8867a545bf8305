'use strict'
// @oclif/core for bin/oclif.js: the one-file bundle `npm run build` makes of it (dist/cli/oclif/core.cjs,
// scripts/bundle-oclif.js), compiled with the V8 code cache made beside it, and put in require's cache
// under the paths of the modules it replaces, so that every `import '@oclif/core'` (ours, the commands',
// @oclif/plugin-commands') gets this one oclif. As modules, oclif and its ~150 files cost a command about
// 100 ms of CPU before it does anything (docs/decisions/oclif-core-bundle.md). The package's modules are
// used instead when there is no bundle, when it was made from another version of @oclif/core than the
// installed one, or with TUTTI_OCLIF_MODULES=1 (the standard path, to bisect a bug against).
const fs = require('node:fs')
const Module = require('node:module')
const path = require('node:path')
const vm = require('node:vm')
const { crc32 } = require('node:zlib')

const BUNDLE_DIR = path.join(__dirname, '..', 'dist', 'cli', 'oclif')
const BUNDLE = path.join(BUNDLE_DIR, 'core.cjs')
/**
 * V8's code for the bundle, behind its CRC-32: V8 checks no checksum in release builds, and may crash on a
 * damaged cache. A CRC, not SHA-256: it is for a torn or damaged file (whoever could forge it could as well
 * write the bundle), and costs 0.4 ms where node:crypto and a digest cost 3 to 9.
 */
const CODE_CACHE = path.join(BUNDLE_DIR, 'core.cjs.v8-cache')
/** Which @oclif/core the bundle was made from: `{ "version": "4.14.0" }`. */
const MADE_FROM = path.join(BUNDLE_DIR, 'made-from.json')
const CHECKSUM_BYTES = 4
/** The bundle's dynamic imports call this parameter of its wrapper (scripts/bundle-oclif.js says why). */
const IMPORT_PARAM = '__tuttiImport'
/** @param {string} specifier */
const importFromHere = (specifier) => import(specifier)
/** @param {string} source */
const wrap = (source) => `(function (exports, require, module, __filename, __dirname, ${IMPORT_PARAM}) {${source}\n})`

/** @param {string} file @returns {Buffer | 'damaged' | undefined} V8's data; undefined when there is none */
function readCodeCache(file) {
  let bytes
  try {
    bytes = fs.readFileSync(file)
  } catch {
    return undefined // a build that made no cache: the bundle compiles as any script
  }
  const data = bytes.subarray(CHECKSUM_BYTES)
  return bytes.length > CHECKSUM_BYTES && bytes.readUInt32LE(0) === crc32(data) ? data : 'damaged'
}

/** What became of the code cache: 'rejected' by V8 (another node, other flags), 'damaged' (its CRC). */
/** @typedef {'accepted' | 'rejected' | 'damaged' | 'absent'} CodeCacheUse */

/** @param {string} request @returns {string | undefined} */
function resolved(request) {
  try {
    return require.resolve(request)
  } catch {
    return undefined
  }
}

/** @param {string} file @returns {unknown} */
function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * Why the bundle is not used, or undefined when it is.
 * @param {{ index?: string, help?: string }} paths
 * @returns {string | undefined}
 */
function declined(paths) {
  if (process.env.TUTTI_OCLIF_MODULES === '1') return 'TUTTI_OCLIF_MODULES=1'
  if (!paths.index || !paths.help) return '@oclif/core is not installed'
  if (require.cache[paths.index]) return '@oclif/core is loaded already'
  const made = /** @type {{ version?: unknown } | undefined} */ (readJson(MADE_FROM))
  if (!made || !fs.existsSync(BUNDLE)) return 'no bundle (a build without scripts/bundle-oclif.js)'
  const installed = /** @type {{ version?: unknown } | undefined} */ (
    readJson(path.join(path.dirname(paths.index), '..', 'package.json'))
  )
  if (made.version !== installed?.version) return `the bundle is of @oclif/core ${made.version}`
  return undefined
}

/**
 * Load the bundle into require's cache (once), so that `@oclif/core` and `@oclif/core/help` resolve to it.
 * @param {{ saveCodeCache?: boolean }} [options] saveCodeCache: the build's run, which writes the cache
 * @returns {{ bundle: boolean, reason?: string, codeCache?: CodeCacheUse, save(): void }}
 */
function useOclifBundle(options = {}) {
  const paths = { index: resolved('@oclif/core'), help: resolved('@oclif/core/help') }
  const reason = declined(paths)
  if (reason) return { bundle: false, reason, save() {} }
  const read = options.saveCodeCache ? undefined : readCodeCache(CODE_CACHE)
  const cachedData = read === 'damaged' ? undefined : read
  const script = new vm.Script(wrap(fs.readFileSync(BUNDLE, 'utf8')), {
    filename: BUNDLE,
    ...(cachedData ? { cachedData } : {}),
  })
  const bundle = new Module(BUNDLE)
  bundle.filename = BUNDLE
  const wrapper = script.runInThisContext()
  const bundleRequire = Module.createRequire(BUNDLE)
  wrapper.call(bundle.exports, bundle.exports, bundleRequire, bundle, BUNDLE, BUNDLE_DIR, importFromHere)
  bundle.loaded = true
  const { core, help } = bundle.exports
  for (const [file, exports] of [
    [paths.index, core],
    [paths.help, help],
  ]) {
    const seeded = new Module(file)
    seeded.filename = file
    seeded.exports = exports
    seeded.loaded = true
    require.cache[file] = seeded
  }
  return {
    bundle: true,
    codeCache: read === 'damaged' ? read : !cachedData ? 'absent' : script.cachedDataRejected ? 'rejected' : 'accepted',
    save() {
      const data = script.createCachedData()
      const head = Buffer.alloc(CHECKSUM_BYTES)
      head.writeUInt32LE(crc32(data))
      fs.writeFileSync(CODE_CACHE, Buffer.concat([head, data]))
    },
  }
}

module.exports = { useOclifBundle, BUNDLE, CODE_CACHE, IMPORT_PARAM, MADE_FROM }
