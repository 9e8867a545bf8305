import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { REPO } from '../support/tutti.js'

// `npm run build` bundles @oclif/core into dist/cli/oclif/core.cjs with a V8 code cache, and bin/oclif.js
// seeds require's cache with it (bin/oclif-core.cjs, docs/decisions/oclif-core-bundle.md). What must hold:
// one oclif for every importer, the cache taken, and the package's modules whenever the bundle cannot be
// trusted: a damaged cache is not given to V8, a bundle of another oclif version is not used.

/** What a fresh node sees after bin/oclif-core.cjs: the loader's answer and whether every importer agrees. */
const PROBE = `
const { useOclifBundle } = require(process.argv[1])
const use = useOclifBundle()
Promise.all([import('@oclif/core'), import('@oclif/core/help')]).then(([core, help]) => {
  const required = require('@oclif/core')
  console.log(JSON.stringify({
    bundle: use.bundle, reason: use.reason, codeCache: use.codeCache,
    oneOclif: core.Command === required.Command && help.Help === required.Help,
    from: require.cache[require.resolve('@oclif/core')].exports === required,
    helpExports: typeof help.standardizeIDFromArgv,
  }))
})`
const probe = (loader: string, env: NodeJS.ProcessEnv = {}, v8Flags: string[] = []) =>
  JSON.parse(
    execFileSync(process.execPath, [...v8Flags, '-e', PROBE, loader], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', TUTTI_OCLIF_MODULES: '', ...env },
      cwd: REPO,
    }),
  )

const copies: string[] = []
/** bin/oclif-core.cjs and the bundle in a tree of their own, which resolves @oclif/core from the checkout. */
function copyOfBuild(): { loader: string; dir: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-oclif-bundle-'))
  copies.push(root)
  fs.mkdirSync(path.join(root, 'bin'))
  fs.copyFileSync(path.join(REPO, 'bin', 'oclif-core.cjs'), path.join(root, 'bin', 'oclif-core.cjs'))
  fs.cpSync(path.join(REPO, 'dist', 'cli', 'oclif'), path.join(root, 'dist', 'cli', 'oclif'), { recursive: true })
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'))
  return { loader: path.join(root, 'bin', 'oclif-core.cjs'), dir: path.join(root, 'dist', 'cli', 'oclif') }
}
afterAll(() => {
  for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true })
})

describe('@oclif/core from its bundle', () => {
  it('the build’s bundle with its code cache is the one oclif of ESM and CommonJS importers', () => {
    expect(probe(path.join(REPO, 'bin', 'oclif-core.cjs'))).toEqual({
      bundle: true,
      codeCache: 'accepted',
      oneOclif: true,
      from: true,
      helpExports: 'function',
    })
  })

  it('TUTTI_OCLIF_MODULES=1 takes the package’s modules', () => {
    expect(probe(path.join(REPO, 'bin', 'oclif-core.cjs'), { TUTTI_OCLIF_MODULES: '1' })).toMatchObject({
      bundle: false,
      reason: 'TUTTI_OCLIF_MODULES=1',
      oneOclif: true,
    })
  })

  it('a node with other V8 flags has its cache rejected by V8, and runs the bundle compiled afresh', () => {
    expect(probe(path.join(REPO, 'bin', 'oclif-core.cjs'), {}, ['--no-lazy'])).toMatchObject({
      bundle: true,
      codeCache: 'rejected',
      oneOclif: true,
      helpExports: 'function',
    })
  })

  it('a damaged code cache is not given to V8; the bundle compiles without it', () => {
    const { loader, dir } = copyOfBuild()
    const cache = path.join(dir, 'core.cjs.v8-cache')
    const bytes = fs.readFileSync(cache)
    bytes[bytes.length >> 1] ^= 0xff
    fs.writeFileSync(cache, bytes)
    expect(probe(loader)).toMatchObject({ bundle: true, codeCache: 'damaged', oneOclif: true })
    fs.writeFileSync(cache, bytes.subarray(0, 2))
    expect(probe(loader)).toMatchObject({ bundle: true, codeCache: 'damaged', oneOclif: true })
  })

  it('a bundle of another @oclif/core version, or none, leaves oclif to its modules', () => {
    const { loader, dir } = copyOfBuild()
    fs.writeFileSync(path.join(dir, 'made-from.json'), '{"version":"4.0.0"}\n')
    expect(probe(loader)).toMatchObject({ bundle: false, reason: 'the bundle is of @oclif/core 4.0.0', oneOclif: true })
    fs.rmSync(dir, { recursive: true })
    expect(probe(loader)).toMatchObject({ bundle: false, reason: expect.stringMatching(/^no bundle/), oneOclif: true })
  })

  it('a command runs through it: its ES module is imported from inside the bundle, with no warning', () => {
    const state = copies[copies.push(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-oclif-state-'))) - 1]!
    const out = spawnSync(process.execPath, [path.join(REPO, 'bin', 'oclif.js'), 'daemon', 'status', '--json'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', TUTTI_OCLIF_MODULES: '', TUTTI_STATE_DIR: state },
    })
    expect({ status: out.status, stderr: out.stderr }).toEqual({ status: 0, stderr: '' })
    expect(JSON.parse(out.stdout)).toEqual({ running: false })
  })
})
