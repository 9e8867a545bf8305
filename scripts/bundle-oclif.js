// Bundles @oclif/core (with its dependencies: debug, lilconfig, minimatch, tinyglobby, ansis …) into one
// CommonJS file, dist/cli/oclif/core.cjs, and makes its V8 code cache, run by `npm run build`.
// bin/oclif-core.cjs loads it in place of the package's ~150 modules (docs/decisions/oclif-core-bundle.md).
// typescript and ts-node stay out: oclif requires them only to run a plugin's TypeScript source, which a
// built tutti never has, and typescript alone would make the bundle 8 MB.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { rolldown } from 'rolldown'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { BUNDLE, CODE_CACHE, IMPORT_PARAM, MADE_FROM } = require('../bin/oclif-core.cjs')
const ENTRY_ID = '\0tutti-oclif-entry'
const OCLIF_BIN = pathToFileURL(path.join(REPO, 'bin', 'oclif.js')).href

/** What the bundle exports: oclif's index and its help module, whose paths bin/oclif-core.cjs seeds. */
/** @type {import('rolldown').Plugin} */
const entry = {
  name: 'tutti-oclif-entry',
  resolveId: (id) => (id === ENTRY_ID ? id : null),
  load: (id) =>
    id === ENTRY_ID ? "module.exports = { core: require('@oclif/core'), help: require('@oclif/core/help') }" : null,
}

/**
 * oclif imports ES module commands with `await import(url)`. A script run through vm.Script with a code
 * cache has no dynamic import of its own on node 20 (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, and
 * vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER warns as experimental on every CLI run), so each one calls
 * `__tuttiImport`, which bin/oclif-core.cjs passes in: the import() of an ordinary module.
 * @type {import('rolldown').Plugin}
 */
const importsFromOutside = {
  name: 'tutti-oclif-imports-from-outside',
  transform(code) {
    const replaced = code.replaceAll('await import(', `await ${IMPORT_PARAM}(`)
    return replaced === code ? null : { code: replaced, map: null }
  },
}

const started = performance.now()
const bundle = await rolldown({
  input: ENTRY_ID,
  platform: 'node',
  external: ['typescript', 'ts-node', /^ts-node\//],
  plugins: [entry, importsFromOutside],
  logLevel: 'warn',
})
try {
  const { output } = await bundle.generate({ format: 'cjs', codeSplitting: false })
  const [chunk] = output
  if (output.length !== 1 || chunk?.type !== 'chunk') throw new Error('@oclif/core did not bundle into one file')
  if (/\bimport\((?!['")])/.test(chunk.code.replace(/\/\*[\s\S]*?\*\//g, '')))
    throw new Error(`an import() is left in the oclif bundle: it would fail in vm.Script (see ${IMPORT_PARAM})`)
  fs.mkdirSync(path.dirname(BUNDLE), { recursive: true })
  fs.rmSync(CODE_CACHE, { force: true })
  fs.writeFileSync(BUNDLE, chunk.code)
} finally {
  await bundle.close()
}
const { version } = JSON.parse(fs.readFileSync(require.resolve('@oclif/core/package.json'), 'utf8'))
fs.writeFileSync(MADE_FROM, `${JSON.stringify({ version })}\n`)

// the code cache, made by a CLI start of its own (no V8 flags of this script's): `tutti --version` loads
// oclif, its config and the manifest, which is the part of every command that runs in oclif
const made = spawnSync(
  process.execPath,
  [
    '-e',
    `const { useOclifBundle } = require(${JSON.stringify(path.join(REPO, 'bin', 'oclif-core.cjs'))})
     const use = useOclifBundle({ saveCodeCache: true })
     if (!use.bundle) throw new Error('the bundle was declined: ' + use.reason)
     require('@oclif/core').execute({ dir: ${JSON.stringify(OCLIF_BIN)}, args: ['--version'] })
       .then(() => use.save())`,
  ],
  { env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8' },
)
if (made.status !== 0) throw new Error(`making the code cache failed (${made.status}): ${made.stderr}`)
/** @param {string} file */
const kB = (file) => (fs.statSync(file).size / 1024).toFixed(0)
console.log(
  `bundled @oclif/core ${version} into ${path.relative(REPO, BUNDLE)} (${kB(BUNDLE)} kB, code cache ` +
    `${kB(CODE_CACHE)} kB) in ${(performance.now() - started).toFixed(0)} ms`,
)
