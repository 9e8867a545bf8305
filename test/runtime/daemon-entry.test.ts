import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { daemonEntry } from '../../src/runtime/client/daemon-process.js'

/**
 * Files standing for the bundle, tsc's entry module and the source entry, with the given mtimes (s; undefined: absent).
 */
function layout(times: { bundle?: number; modules?: number; source?: number }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-entry-'))
  const files = {
    bundle: path.join(dir, 'dist/daemon/main.js'),
    modules: path.join(dir, 'dist/runtime/daemon/main.js'),
    source: path.join(dir, 'src/runtime/daemon/main.ts'),
  }
  for (const [name, file] of Object.entries(files)) {
    const t = times[name as keyof typeof times]
    if (t === undefined) continue
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, '')
    fs.utimesSync(file, t, t)
  }
  const pick = (): string => path.relative(dir, daemonEntry(files.bundle, files.modules, files.source))
  return { pick, done: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

it.for([
  [
    'an installed package: the bundle, whatever order unpacking gave the mtimes',
    { bundle: 1000, modules: 2000 },
    'dist/daemon/main.js',
  ],
  [
    'a checkout built by npm run build: the bundle, made after tsc',
    { bundle: 2000, modules: 1000, source: 500 },
    'dist/daemon/main.js',
  ],
  [
    'a checkout where both have the same mtime: the bundle',
    { bundle: 1000, modules: 1000, source: 500 },
    'dist/daemon/main.js',
  ],
  [
    'a checkout rebuilt by tsc alone after the bundle: the modules, which are current',
    { bundle: 1000, modules: 2000, source: 500 },
    'dist/runtime/daemon/main.js',
  ],
  ['no bundle (tsc alone): the modules', { modules: 1000, source: 500 }, 'dist/runtime/daemon/main.js'],
] as const)('%s', ([, times, expected]) => {
  const l = layout(times)
  try {
    expect(l.pick()).toBe(expected)
  } finally {
    l.done()
  }
})
