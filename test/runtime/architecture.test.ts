import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { REPO } from '../support/tutti.js'

// The dependency directions DESIGN §3 asks for, checked on the import lines.
function imports(dir: string): Array<{ file: string; spec: string }> {
  const out: Array<{ file: string; spec: string }> = []
  for (const rel of fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[]) {
    if (!rel.endsWith('.ts')) continue
    const text = fs.readFileSync(path.join(REPO, dir, rel), 'utf8')
    for (const m of text.matchAll(
      // an import's braces may span lines (the formatter breaks long ones)
      /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
    ))
      out.push({ file: path.join(dir, rel), spec: (m[1] ?? m[2])! })
  }
  return out
}

const offenders = (dir: string, banned: RegExp) =>
  imports(dir)
    .filter((i) => banned.test(i.spec))
    .map((i) => `${i.file} → ${i.spec}`)

it('src/runtime never imports oclif or the commands', () => {
  expect(offenders('src/runtime', /@oclif|\/commands\/|\/cli\//)).toEqual([])
})

it('the registry is the pure core: no HTTP, SDK, process or upstream code', () => {
  expect(
    offenders(
      'src/runtime/registry',
      /^h3|node:http|@modelcontextprotocol|child_process|\/upstream\/|\/mcpserver\/|\/daemon\/|\/proc\//,
    ),
  ).toEqual([])
})

it(
  'upstream clients know nothing of the local MCP server, ' + 'and the server reaches upstreams only through bindings',
  () => {
    expect(offenders('src/runtime/upstream', /\/mcpserver\/|\/daemon\/|@modelcontextprotocol\/server/)).toEqual([])
    expect(offenders('src/runtime/mcpserver', /\/upstream\/|@modelcontextprotocol\/client/)).toEqual([])
  },
)

it('commands are thin: they talk to the runtime through the client, never to the daemon or store directly', () => {
  expect(offenders('src/commands', /\/runtime\/(daemon|store|registry|upstream|mcpserver|reconcile)\//)).toEqual([])
  for (const rel of fs.readdirSync(path.join(REPO, 'src/commands'), { recursive: true }) as string[]) {
    if (!rel.endsWith('.ts')) continue
    const lines = fs.readFileSync(path.join(REPO, 'src/commands', rel), 'utf8').split('\n').length
    expect(lines, rel).toBeLessThanOrEqual(200)
  }
})

/**
 * The rooms of src/runtime, lowest first. A file imports only from its own
 * room or from a lower layer; two rooms on one layer do not import each
 * other. The root files (errors, names, paths, connector-key, version) are
 * layer 0.
 */
const LAYERS: Record<string, number> = {
  log: 1,
  proc: 1.5,
  fs: 2,
  'http-surface': 2,
  release: 3,
  registry: 3,
  skills: 4,
  'control-protocol': 4,
  manifest: 5,
  oauth: 5.5,
  store: 6,
  upstream: 6,
  shims: 6,
  sources: 6.5,
  install: 7,
  reconcile: 8,
  sessions: 8,
  mcpserver: 9,
  daemon: 10,
  client: 11,
  exec: 11.5,
  bridge: 11.5,
  doctor: 12,
}

const roomOf = (file: string): string => {
  const rel = path.relative(path.join(REPO, 'src/runtime'), file).split(path.sep)
  return rel.length === 1 ? '(root)' : rel[0]!
}

it('src/runtime keeps its layer order: every import goes to the same room or a lower layer', () => {
  const offending: string[] = []
  for (const { file, spec } of imports('src/runtime')) {
    if (!spec.startsWith('.')) continue
    const from = roomOf(path.join(REPO, file))
    const to = roomOf(path.resolve(REPO, path.dirname(file), spec))
    if (from === to || to === '(root)') continue
    if (!(from in LAYERS) || !(to in LAYERS)) offending.push(`${file} → ${spec} (room not in LAYERS)`)
    else if (from === '(root)' || LAYERS[to]! >= LAYERS[from]!)
      offending.push(`${file} → ${spec} (${from} ${LAYERS[from]} → ${to} ${LAYERS[to]})`)
  }
  expect(offending).toEqual([])
})

it('no source file grows past 300 lines; commands stay thin', () => {
  for (const rel of fs.readdirSync(path.join(REPO, 'src'), { recursive: true }) as string[]) {
    if (/\.c?ts$/.test(rel))
      expect(fs.readFileSync(path.join(REPO, 'src', rel), 'utf8').split('\n').length, rel).toBeLessThanOrEqual(300)
  }
})

it('src has no import cycles, type-only imports included', () => {
  const graph = new Map<string, string[]>()
  for (const { file, spec } of imports('src')) {
    if (!spec.startsWith('.')) continue
    const to = path.join(path.dirname(file), spec).replace(/\.c?js$/, (ext) => ext.replace('js', 'ts'))
    graph.set(file, [...(graph.get(file) ?? []), to])
  }
  const cycles: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].join(' → '))
      return
    }
    state.set(file, 'open')
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file])
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file, [])
  expect(graph.size).toBeGreaterThan(100)
  expect(cycles).toEqual([])
})

it('no line of code is over 120 characters', () => {
  const long: string[] = []
  for (const dir of ['src', 'test', 'bench', 'scripts', 'bin']) {
    for (const rel of fs.readdirSync(path.join(REPO, dir), { recursive: true }) as string[]) {
      if (!/\.(c|m)?[jt]s$/.test(rel) || rel.split(path.sep).includes('node_modules')) continue
      const lines = fs.readFileSync(path.join(REPO, dir, rel), 'utf8').split('\n')
      lines.forEach((line, i) => line.length > 120 && long.push(`${dir}/${rel}:${i + 1} (${line.length})`))
    }
  }
  expect(long).toEqual([])
})
