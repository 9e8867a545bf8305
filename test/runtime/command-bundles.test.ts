import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { cleanupState, REPO, tempStateDir, tuttiEnv } from '../support/tutti.js'

// `npm run build` rewrites the oclif commands as entries of shared chunks (scripts/bundle-commands.js,
// docs/decisions/command-bundles.md). What must hold: each command imports its chunks, node's modules and
// oclif only (one oclif, so that its classes compare with instanceof), no placeholder is left, and the
// paths a bundled module makes from its import.meta.url still name its own file in dist/.
const DIST = path.join(REPO, 'dist')
const commandFiles = (dir = path.join(DIST, 'commands')): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? commandFiles(p) : e.name.endsWith('.js') ? [p] : []
  })
const importsOf = (code: string): string[] =>
  [...code.matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm), ...code.matchAll(/import\(['"]([^'"]+)['"]\)/g)].map(
    (m) => m[1]!,
  )

describe('the bundled commands', () => {
  it('import chunks, node: and @oclif/ only; oclif’s own `commands` listing stays a module', () => {
    for (const file of commandFiles()) {
      const rel = path.relative(DIST, file)
      const code = fs.readFileSync(file, 'utf8')
      if (rel === 'commands/commands.js') {
        expect(importsOf(code)).toContain('@oclif/plugin-commands')
        continue
      }
      for (const spec of importsOf(code))
        expect(spec, `${rel} imports ${spec}`).toMatch(/^(node:|@oclif\/|(\.\.\/)+cli\/chunks\/)/)
    }
  })

  it('no chunk keeps the dist-root placeholder, and a module’s own URL names its file', async () => {
    const chunks = path.join(DIST, 'cli', 'chunks')
    const codes = fs.readdirSync(chunks).filter((n) => n.endsWith('.js'))
    expect(codes.length).toBeGreaterThan(0)
    for (const name of codes) expect(fs.readFileSync(path.join(chunks, name), 'utf8')).not.toContain('__TUTTI_')
    const version = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version
    // daemon-process.ts finds the daemon's entry, and version.ts package.json, through their own URLs:
    // a bundled `daemon start` starts a daemon of this version
    const dir = tempStateDir('command-bundles')
    try {
      const out = execFileSync(process.execPath, [path.join(REPO, 'bin', 'oclif.js'), 'daemon', 'start', '--json'], {
        encoding: 'utf8',
        env: tuttiEnv(dir),
      })
      expect(JSON.parse(out)).toMatchObject({ running: true, productVersion: version })
    } finally {
      await cleanupState(dir)
    }
  })
})
