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
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"\n]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ file: path.join(dir, rel), spec: (m[1] ?? m[2])! })
  }
  return out
}

const offenders = (dir: string, banned: RegExp) => imports(dir).filter((i) => banned.test(i.spec)).map((i) => `${i.file} → ${i.spec}`)

it('src/runtime never imports oclif or the commands', () => {
  expect(offenders('src/runtime', /@oclif|\/commands\/|\/cli\//)).toEqual([])
})

it('the registry is the pure core: no HTTP, SDK, process or upstream code', () => {
  expect(offenders('src/runtime/registry', /^h3|node:http|@modelcontextprotocol|child_process|\/upstream\/|\/mcpserver\/|\/daemon\/|\/proc\//)).toEqual([])
})

it('upstream clients know nothing of the local MCP server, and the server reaches upstreams only through bindings', () => {
  expect(offenders('src/runtime/upstream', /\/mcpserver\/|\/daemon\/|@modelcontextprotocol\/server/)).toEqual([])
  expect(offenders('src/runtime/mcpserver', /\/upstream\/|@modelcontextprotocol\/client/)).toEqual([])
})

it('commands are thin: they talk to the runtime through the client, never to the daemon or store directly', () => {
  expect(offenders('src/commands', /\/runtime\/(daemon|store|registry|upstream|mcpserver|reconcile)\//)).toEqual([])
  for (const rel of fs.readdirSync(path.join(REPO, 'src/commands'), { recursive: true }) as string[]) {
    if (!rel.endsWith('.ts')) continue
    const lines = fs.readFileSync(path.join(REPO, 'src/commands', rel), 'utf8').split('\n').length
    expect(lines, rel).toBeLessThanOrEqual(200)
  }
})

it('no runtime file grows past 500 lines', () => {
  for (const rel of fs.readdirSync(path.join(REPO, 'src'), { recursive: true }) as string[]) {
    if (rel.endsWith('.ts')) expect(fs.readFileSync(path.join(REPO, 'src', rel), 'utf8').split('\n').length, rel).toBeLessThanOrEqual(500)
  }
})
