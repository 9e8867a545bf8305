// Bundles the oclif commands (tsc's dist/commands/**.js) with everything they import, @oclif/* aside,
// run by `npm run build` after tsc: each command file is rewritten in place as a small entry that
// imports shared chunks in dist/cli/chunks/, so oclif finds and loads the commands as before, through
// a handful of files instead of some 200 ES modules of ours, zod's, the SDK's and the rest. Measured
// on the 2-core development machine, CPU per run with a warm daemon (8 runs each): session prepare
// 0.231 -> 0.176 s, connector connect 0.296 -> 0.236 s, connector logs 0.215 -> 0.164 s, daemon status
// 0.159 -> 0.148 s (docs/decisions/command-bundles.md). `commands` (oclif's own listing, which pulls in
// ink) stays tsc's module. Running `npx tsc -p tsconfig.json` after a build puts every command back
// to tsc's modules: the standard path, for bisecting a bug against them.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(REPO, 'dist')
const COMMANDS = path.join(DIST, 'commands')
const CHUNKS = 'cli/chunks'
/** Left to tsc: oclif's own `commands` listing imports ink, whose top-level await no chunk may hold. */
const UNBUNDLED = new Set(['commands'])
const ROOT_PLACEHOLDER = '__TUTTI_DIST_ROOT__'

/**
 * Every command file under dist/commands, by its oclif id path (`connector/install`).
 * @param {string} [dir] @param {Record<string, string>} [out] @returns {Record<string, string>}
 */
function commandFiles(dir = COMMANDS, out = {}) {
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name)
    if (fs.statSync(file).isDirectory()) commandFiles(file, out)
    else if (name.endsWith('.js')) {
      const id = path.relative(COMMANDS, file).slice(0, -'.js'.length).split(path.sep).join('/')
      if (!UNBUNDLED.has(id)) out[id] = file
    }
  }
  return out
}

/**
 * A bundled module's import.meta.url would be its chunk's, so the paths our modules make from it
 * (version.ts -> package.json, shim-target.ts -> launcher.cjs, daemon-process.ts -> the daemon's entry)
 * are pointed at each module's own file in dist/, which ships beside the chunks: the module's path under
 * dist/, resolved against dist/ as seen from whichever file the module ends up in.
 * @type {import('rolldown').Plugin}
 */
const ownModuleUrls = {
  name: 'tutti-own-module-urls-split',
  transform(code, id) {
    if (!id.startsWith(DIST + path.sep) || !code.includes('import.meta.url')) return null
    const rel = path.relative(DIST, id).split(path.sep).join('/')
    return {
      code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, ${ROOT_PLACEHOLDER}).href`),
      map: null,
    }
  },
  renderChunk(code, chunk) {
    if (!code.includes(ROOT_PLACEHOLDER)) return null
    const up = '../'.repeat(chunk.fileName.split('/').length - 1) || './'
    return { code: code.replaceAll(ROOT_PLACEHOLDER, `new URL(${JSON.stringify(up)}, import.meta.url)`), map: null }
  },
}

const started = performance.now()
const input = commandFiles()
if (!Object.keys(input).length) throw new Error('dist/commands is empty: run tsc first')
// a bundle bundled again would keep the chunks of the last build: the input is tsc's output, always
for (const file of Object.values(input))
  if (fs.readFileSync(file, 'utf8').includes(`/${CHUNKS}/`))
    throw new Error(`${path.relative(REPO, file)} is bundled already: run tsc first (npm run build does)`)
const bundle = await rolldown({
  input,
  platform: 'node',
  // one oclif for bin/oclif.js and the commands: its classes are compared with instanceof
  external: [/^@oclif\//],
  plugins: [ownModuleUrls],
  logLevel: 'warn',
})
let written = 0
try {
  const { output } = await bundle.generate({
    format: 'esm',
    entryFileNames: 'commands/[name].js',
    chunkFileNames: `${CHUNKS}/[name]-[hash].js`,
    sourcemap: true,
  })
  const keep = new Set()
  // chunks first, under names of their content; the entries that import them replace tsc's files last,
  // each written beside and renamed over, so a CLI starting meanwhile reads one whole entry
  const ordered = [...output].sort(
    (a, b) => Number(a.type === 'chunk' && a.isEntry) - Number(b.type === 'chunk' && b.isEntry),
  )
  for (const item of ordered) {
    const file = path.join(DIST, item.fileName)
    const text = item.type === 'chunk' ? item.code : item.source
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(tmp, text)
    fs.renameSync(tmp, file)
    if (item.fileName.startsWith(`${CHUNKS}/`)) keep.add(path.basename(item.fileName))
    written++
  }
  // chunks of an earlier build that nothing imports any more
  for (const name of fs.readdirSync(path.join(DIST, CHUNKS)))
    if (!keep.has(name)) fs.rmSync(path.join(DIST, CHUNKS, name), { force: true })
} finally {
  await bundle.close()
}
const ms = (performance.now() - started).toFixed(0)
console.log(`bundled ${Object.keys(input).length} commands into ${written} files under dist/ in ${ms} ms`)
