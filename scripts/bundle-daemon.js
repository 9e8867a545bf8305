// Bundles the daemon entry (dist/runtime/daemon/main.js, tsc's output) with
// every module it imports into dist/daemon/main.js: at each daemon start node
// then reads and compiles one file instead of resolving ~300 (about half the
// module-loading time). Run by `npm run build` after tsc.
//
// A bundled module's import.meta.url would be the bundle's, so the paths our
// modules make from it (version.ts → package.json, shim-target.ts →
// launcher.js, tutti-command.ts → bin/run.js) are pointed at each module's own
// file in dist/, which ships beside the bundle. The entry keeps the bundle's
// URL: it checks that it is the file node was asked to run. Chunks of lazy
// imports sit next to main.js, so one relative path serves them all.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(REPO, 'dist')
const ENTRY = path.join(DIST, 'runtime/daemon/main.js')
const OUT_DIR = path.join(DIST, 'daemon')

/** import.meta.url of each of our dist modules → that module's own file, relative to the bundle. */
const ownModuleUrls = {
  name: 'tutti-own-module-urls',
  transform(code, id) {
    if (id === ENTRY || !id.startsWith(DIST + path.sep) || !code.includes('import.meta.url')) return null
    const rel = path.relative(OUT_DIR, id).split(path.sep).join('/')
    return { code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), map: null }
  },
}

const started = performance.now()
if (!fs.existsSync(ENTRY)) throw new Error(`${path.relative(REPO, ENTRY)} is missing: run tsc first`)
// written beside, then renamed over the old files one by one: a daemon starting meanwhile (another build's
// tests share dist/) reads either bundle whole, never a half-written one
const staging = fs.mkdtempSync(path.join(DIST, '.daemon-'))
try {
  const bundle = await rolldown({ input: ENTRY, platform: 'node', plugins: [ownModuleUrls], logLevel: 'warn' })
  // not minified: daemon.log's stack traces stay readable (a minified bundle loads ~15 % faster)
  const { output } = await bundle.write({ dir: staging, format: 'esm', entryFileNames: 'main.js', chunkFileNames: '[name].js', sourcemap: true })
  await bundle.close()
  fs.mkdirSync(OUT_DIR, { recursive: true })
  const written = new Set(fs.readdirSync(staging))
  // chunks first, the entry that imports them last
  for (const name of [...written].sort((a, b) => Number(a === 'main.js') - Number(b === 'main.js'))) fs.renameSync(path.join(staging, name), path.join(OUT_DIR, name))
  for (const name of fs.readdirSync(OUT_DIR)) if (!written.has(name)) fs.rmSync(path.join(OUT_DIR, name), { recursive: true, force: true })
  const chunks = output.filter((o) => o.type === 'chunk')
  const kib = chunks.reduce((n, c) => n + Buffer.byteLength(c.code), 0) / 1024
  console.log(`bundled the daemon: ${path.relative(REPO, OUT_DIR)}/ (${chunks.map((c) => c.fileName).join(', ')}; ${kib.toFixed(0)} KiB) in ${(performance.now() - started).toFixed(0)} ms`)
} finally {
  fs.rmSync(staging, { recursive: true, force: true })
}
