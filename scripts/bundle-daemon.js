// Bundles the daemon (dist/runtime/daemon/main.js, tsc's output) with every
// module it imports into dist/daemon/, run by `npm run build` after tsc:
//   daemon-<content hash>.cjs  the daemon: one CommonJS file instead of ~300
//                              modules to resolve and read at every start;
//   main.js                    its entry (src/runtime/daemon/bundle-entry.ts),
//                              which runs it with a V8 code cache (code-cache.ts).
// CommonJS because node 20 can cache compiled code only for scripts; strict,
// like the ES modules it is made of.
//
// Each module's import.meta.url stays its own file's (own-module-urls.js).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'
import { ownModuleUrls as ownModuleUrlsUnder } from './own-module-urls.js'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(REPO, 'dist')
const DAEMON = path.join(DIST, 'runtime/daemon/main.js')
const ENTRY = path.join(DIST, 'runtime/daemon/bundle-entry.js')
const BUNDLE_PLACEHOLDER = "'__TUTTI_DAEMON_BUNDLE__'"
const OUT_DIR = path.join(DIST, 'daemon')

/** @param {string} entry */
const ownModuleUrls = (entry) => ownModuleUrlsUnder({ dist: DIST, outDir: OUT_DIR, entry })

/** The entry names the daemon bundle it runs. @param {string} fileName @returns {import('rolldown').Plugin} */
const bundleName = (fileName) => ({
  name: 'tutti-daemon-bundle-name',
  transform(code, id) {
    if (id !== ENTRY) return null
    if (!code.includes(BUNDLE_PLACEHOLDER))
      throw new Error(`${path.relative(REPO, ENTRY)} no longer holds ${BUNDLE_PLACEHOLDER}`)
    return { code: code.replace(BUNDLE_PLACEHOLDER, JSON.stringify(`./${fileName}`)), map: null }
  },
})

/**
 * @param {string} input @param {import('rolldown').Plugin[]} plugins
 * @param {import('rolldown').OutputOptions} output
 */
async function build(input, plugins, output) {
  const bundle = await rolldown({ input, platform: 'node', plugins, logLevel: 'warn' })
  try {
    // not minified: daemon.log's stack traces stay readable (a minified bundle loads ~15 % faster)
    const { output: chunks } = await bundle.generate({ sourcemap: 'hidden', ...output })
    if (chunks.filter((c) => c.type === 'chunk').length !== 1)
      throw new Error(
        `${path.relative(REPO, input)}: ` +
          `expected one chunk (a dynamic import inside the daemon must stay inside its bundle)`,
      )
    return chunks[0]
  } finally {
    await bundle.close()
  }
}

const started = performance.now()
for (const file of [DAEMON, ENTRY])
  if (!fs.existsSync(file)) throw new Error(`${path.relative(REPO, file)} is missing: run tsc first`)
const daemon = await build(DAEMON, [ownModuleUrls(DAEMON)], {
  format: 'cjs',
  strict: true,
  exports: 'named',
  codeSplitting: false,
})
const daemonFile = `daemon-${createHash('sha256').update(daemon.code).digest('hex').slice(0, 16)}.cjs`
const entry = await build(ENTRY, [bundleName(daemonFile), ownModuleUrls(ENTRY)], { format: 'esm' })

// written beside, then renamed over the old files one by one, the entry last: a daemon starting meanwhile
// (another build's tests share dist/) reads one whole entry and the bundle it names, never a half-written file
if (!daemon.map || !entry.map) throw new Error('rolldown made no source map')
const staging = fs.mkdtempSync(path.join(DIST, '.daemon-'))
try {
  const files = {
    [daemonFile]: `${daemon.code}\n//# sourceMappingURL=${daemonFile}.map\n`,
    [`${daemonFile}.map`]: daemon.map.toString(),
    'main.js.map': entry.map.toString(),
    'main.js': `${entry.code}\n//# sourceMappingURL=main.js.map\n`,
  }
  fs.mkdirSync(OUT_DIR, { recursive: true })
  for (const [name, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(staging, name), text)
    fs.renameSync(path.join(staging, name), path.join(OUT_DIR, name))
  }
  for (const name of fs.readdirSync(OUT_DIR))
    if (!(name in files)) fs.rmSync(path.join(OUT_DIR, name), { recursive: true, force: true })
} finally {
  fs.rmSync(staging, { recursive: true, force: true })
}
const kib = (Buffer.byteLength(daemon.code) / 1024).toFixed(0)
const ms = (performance.now() - started).toFixed(0)
console.log(`bundled the daemon: ${path.relative(REPO, OUT_DIR)}/main.js → ${daemonFile} (${kib} KiB) in ${ms} ms`)
