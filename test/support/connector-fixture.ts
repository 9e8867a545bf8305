import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export interface FixtureFiles {
  [rel: string]: string | { symlink: string } | { mode: number; content: string }
}

/** Write a connector release directory from a manifest (object or raw text) and files. */
export function makeConnector(manifest: object | string, files: FixtureFiles = {}, parent?: string): string {
  const dir = fs.mkdtempSync(path.join(parent ?? os.tmpdir(), 'tutti-conn-'))
  fs.writeFileSync(
    path.join(dir, 'tutti-connector.json'),
    typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2),
  )
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(dir, rel)
    fs.mkdirSync(path.dirname(p), { recursive: true })
    if (typeof spec === 'string') fs.writeFileSync(p, spec)
    else if ('symlink' in spec) fs.symlinkSync(spec.symlink, p)
    else fs.writeFileSync(p, spec.content, { mode: spec.mode })
  }
  return dir
}

export const skill = (name: string, description = 'A skill', extra = ''): string =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n`

export function baseManifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    key: 'sample',
    name: 'Sample',
    version: '1.0.0',
    description: 'A sample connector',
    auth: { kind: 'none' },
    cli: { entrypoint: 'bin/cli.js' },
    ...overrides,
  }
}

export const CLI_FILE = { 'bin/cli.js': { mode: 0o755, content: '#!/usr/bin/env node\nconsole.log("sample")\n' } }
