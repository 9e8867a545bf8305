import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { daemonEntry } from '../../src/runtime/client/daemon-process.js'
import { REPO } from '../support/tutti.js'

// Which file answers `connector available` without oclif (bin/lean-entry.cjs):
// the CommonJS bundle, unless tsc rebuilt the modules after it in a source
// checkout; an installed package (no src/) always runs its bundle. The
// daemon's entry (client/daemon-process.ts) asks the same rule
// (bin/build-choice.cjs); each layout below is put to both callers, and
// they must choose alike.
const { leanEntry } = createRequire(import.meta.url)(path.join(REPO, 'bin', 'lean-entry.cjs')) as {
  leanEntry: (root: string) => { kind: string; file: string }
}

function layout(times: { bundle?: number; modules?: number; src?: boolean }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lean-entry-'))
  const files = {
    bundle: path.join(root, 'dist/cli/available-lean.cjs'),
    modules: path.join(root, 'dist/cli/available-entry.js'),
  }
  for (const [name, file] of Object.entries(files)) {
    const t = times[name as 'bundle' | 'modules']
    if (t === undefined) continue
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, '')
    fs.utimesSync(file, t, t)
  }
  const daemon = {
    bundle: path.join(root, 'dist/daemon/main.js'),
    modules: path.join(root, 'dist/runtime/daemon/main.js'),
    source: path.join(root, 'src/runtime/daemon/main.ts'),
  }
  for (const [file, t] of [
    [daemon.bundle, times.bundle],
    [daemon.modules, times.modules],
  ] as const) {
    if (t === undefined) continue
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, '')
    fs.utimesSync(file, t, t)
  }
  if (times.src) {
    for (const source of [daemon.source, path.join(root, 'src/cli/available-entry.ts')]) {
      fs.mkdirSync(path.dirname(source), { recursive: true })
      fs.writeFileSync(source, '')
    }
  }
  const daemonKind = () =>
    daemonEntry(daemon.bundle, daemon.modules, daemon.source) === daemon.bundle ? 'bundle' : 'modules'
  return {
    pick: () => path.relative(root, leanEntry(root).file),
    kind: () => leanEntry(root).kind,
    daemonKind,
    done: () => fs.rmSync(root, { recursive: true, force: true }),
  }
}

it.for([
  [
    'an installed package: the bundle, whatever order unpacking gave the mtimes',
    { bundle: 1000, modules: 2000 },
    'dist/cli/available-lean.cjs',
  ],
  [
    'a checkout built by npm run build: the bundle, made after tsc',
    { bundle: 2000, modules: 1000, src: true },
    'dist/cli/available-lean.cjs',
  ],
  [
    'a checkout where both have the same mtime: the bundle',
    { bundle: 1000, modules: 1000, src: true },
    'dist/cli/available-lean.cjs',
  ],
  [
    'a checkout rebuilt by tsc alone after the bundle: the modules, which are current',
    { bundle: 1000, modules: 2000, src: true },
    'dist/cli/available-entry.js',
  ],
  ['no bundle (tsc alone): the modules', { modules: 1000, src: true }, 'dist/cli/available-entry.js'],
] as const)('%s', ([, times, expected]) => {
  const l = layout(times)
  try {
    expect(l.pick()).toBe(expected)
    expect(l.kind()).toBe(expected.endsWith('.cjs') ? 'bundle' : 'modules')
    expect(l.daemonKind(), 'the daemon entry chooses alike').toBe(l.kind())
  } finally {
    l.done()
  }
})

it(
  'a checkout before its first build: ' +
    'bin/run.cjs says to run npm run build, exit 1, for the lean command and any other',
  () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-unbuilt-'))
    try {
      // bin/ as a clone has it, dist/ not built
      fs.cpSync(path.join(REPO, 'bin'), path.join(root, 'bin'), { recursive: true })
      for (const argv of [
        ['connector', 'available'],
        ['connector', 'install', 'x'],
      ]) {
        const res = spawnSync(process.execPath, [path.join(root, 'bin', 'run.cjs'), ...argv], { encoding: 'utf8' })
        expect(res.status, argv.join(' ')).toBe(1)
        expect(res.stderr).toBe(
          `tutti: not built yet (no ${path.join(root, 'dist')}); run \`npm run build\` in ${root} first\n`,
        )
        expect(res.stdout).toBe('')
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  },
)
