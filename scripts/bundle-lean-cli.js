// Bundles the lean `connector available` entry (dist/cli/available-entry.js,
// tsc's output) and the modules it imports into one CommonJS file,
// dist/cli/available-lean.cjs, run by `npm run build` after tsc. bin/run.cjs
// requires it: no ES module loader, one file instead of ~16 modules. Measured
// on the 2-core development machine: `connector available --json` 133.5 →
// 105.6 ms median against `node -e 0` at 83.7 ms (30 alternating runs).
// Dynamic imports (the table, starting a daemon, the rest of Connectors) stay
// imports of their dist modules: only what the common case runs is bundled.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'
import { ownModuleUrls } from './own-module-urls.js'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(REPO, 'dist')
const OUT_DIR = path.join(DIST, 'cli')
const ENTRY = path.join(OUT_DIR, 'available-entry.js')
const OUT = path.join(OUT_DIR, 'available-lean.cjs')

/** `import('./x.js')` inside a bundled module → an import of dist's own module, relative to the bundle. */
/** @type {import('rolldown').Plugin} */
const dynamicImportsStayModules = {
  name: 'tutti-dynamic-imports-stay-modules',
  resolveDynamicImport(specifier, importer) {
    if (typeof specifier !== 'string' || !specifier.startsWith('.')) return null
    return { id: path.resolve(path.dirname(/** @type {string} */ (importer)), specifier), external: true }
  },
}

const started = performance.now()
if (!fs.existsSync(ENTRY)) throw new Error(`${path.relative(REPO, ENTRY)} is missing: run tsc first`)
const bundle = await rolldown({
  input: ENTRY,
  platform: 'node',
  plugins: [ownModuleUrls({ dist: DIST, outDir: OUT_DIR }), dynamicImportsStayModules],
  logLevel: 'warn',
})
try {
  const { output } = await bundle.generate({ format: 'cjs', strict: true, exports: 'named', codeSplitting: false })
  const chunks = output.filter((c) => c.type === 'chunk')
  if (chunks.length !== 1) throw new Error(`${path.relative(REPO, ENTRY)}: expected one chunk, got ${chunks.length}`)
  // beside, then renamed over: a CLI starting meanwhile (tests share dist/) reads one whole file
  const tmp = `${OUT}.${process.pid}.tmp`
  fs.writeFileSync(tmp, chunks[0].code)
  fs.renameSync(tmp, OUT)
  const kib = (Buffer.byteLength(chunks[0].code) / 1024).toFixed(0)
  const ms = (performance.now() - started).toFixed(0)
  console.log(`bundled the lean CLI: ${path.relative(REPO, OUT)} (${kib} KiB) in ${ms} ms`)
} finally {
  await bundle.close()
}
