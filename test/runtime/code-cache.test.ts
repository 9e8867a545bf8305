import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { expect, it } from 'vitest'
import { thisProcess } from '../../src/runtime/proc/pid.js'
import { REPO } from '../support/tutti.js'

/** A CommonJS bundle with enough functions for V8 to cache, and what a module sees of its wrapper. */
const BUNDLE = `"use strict";
const parts = [];
for (let i = 0; i < 200; i++) parts.push((x) => x * i);
exports.sum = (x) => parts.reduce((n, f) => n + f(x), 0);
exports.seen = {
  filename: __filename,
  dirname: __dirname,
  requires: typeof require('node:path').join,
  strict: (function () { return this === undefined })(),
};
`

/**
 * One daemon start's worth, in a process of its own (V8 keeps what it
 * compiled for the rest of a process, so a second run in this one would
 * never read the cache): the built code-cache module runs the bundle, then
 * saves the cache.
 */
interface Run {
  cache: string
  sum: number
  seen: object
  saved: boolean
  unfinished: number[]
}
function runOnce(bundleFile: string, cacheFile: string, finish = true): Run {
  const module = pathToFileURL(path.join(REPO, 'dist/runtime/daemon/code-cache.js')).href
  // finish = false: a start that never says it finished, as one that V8 aborted on the cache
  const script = `const { runCachedBundle } = await import(${JSON.stringify(module)})
const b = runCachedBundle(${JSON.stringify(bundleFile)}, ${JSON.stringify(cacheFile)})
const sum = b.exports.sum(1)
if (${finish}) b.started()
const saved = await b.saveCache()
console.log(JSON.stringify({ cache: b.cache, sum, seen: b.exports.seen, saved, unfinished: b.unfinished }))`
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))
}

it(
  'runs a CommonJS bundle, saves its code cache, and the next start takes it; ' + 'a cache it cannot use is replaced',
  () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-code-cache-'))
    try {
      const bundleFile = path.join(dir, 'bundle-0123.cjs')
      fs.writeFileSync(bundleFile, BUNDLE)
      const cacheDir = path.join(dir, 'code-cache')
      const cacheFile = path.join(cacheDir, 'bundle-0123-v8-x.cache')
      fs.mkdirSync(cacheDir, { mode: 0o700 })
      fs.writeFileSync(path.join(cacheDir, 'bundle-old-v8-x.cache'), 'an older bundle')

      const seen = { filename: bundleFile, dirname: dir, requires: 'function', strict: true }
      expect(runOnce(bundleFile, cacheFile)).toEqual({
        cache: 'absent',
        sum: 19_900,
        seen,
        saved: true,
        unfinished: [],
      })
      expect(fs.statSync(cacheFile).mode & 0o777).toBe(0o600)
      // the caches of other bundles go
      expect(fs.readdirSync(cacheDir)).toEqual([path.basename(cacheFile)])
      const saved = fs.readFileSync(cacheFile)

      expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'accepted', sum: 19_900, saved: false })
      expect(fs.readFileSync(cacheFile).equals(saved)).toBe(true)

      fs.writeFileSync(cacheFile, 'not a V8 code cache')
      expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'rejected', sum: 19_900, saved: true })
      expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'accepted', saved: false })

      // bytes flipped inside V8's data (V8 would run it, or abort the process): refused by the digest, and rewritten
      const flipped = Buffer.from(fs.readFileSync(cacheFile))
      for (let i = 40; i < flipped.length; i += 97) flipped[i]! ^= 0x55
      fs.writeFileSync(cacheFile, flipped)
      expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'rejected', sum: 19_900, saved: true })
      expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'accepted', sum: 19_900, saved: false })
      expect(fs.readdirSync(cacheDir)).toEqual([path.basename(cacheFile)])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  },
)

it('a start that used the cache and never finished leaves its marker: the next start removes the cache unused', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-code-cache-'))
  try {
    const bundleFile = path.join(dir, 'bundle-0123.cjs')
    fs.writeFileSync(bundleFile, BUNDLE)
    const cacheFile = path.join(dir, 'code-cache', 'bundle-0123-v8-x.cache')
    fs.mkdirSync(path.dirname(cacheFile), { mode: 0o700 })
    expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'absent', saved: true })
    // a start with it that is still running (here: this process) is not taken for one that crashed
    const live = `${cacheFile}.starting-${process.pid}`
    fs.writeFileSync(live, JSON.stringify(thisProcess()))
    expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'accepted', unfinished: [] })
    fs.rmSync(live)

    expect(runOnce(bundleFile, cacheFile, false)).toMatchObject({ cache: 'accepted', saved: false })
    const [marker] = fs.readdirSync(path.dirname(cacheFile)).filter((n) => n.includes('.starting-'))
    const crashed = Number(marker!.split('.starting-')[1])
    const next = runOnce(bundleFile, cacheFile)
    expect(next).toMatchObject({ cache: 'dropped', sum: 19_900, saved: true, unfinished: [crashed] })
    expect(fs.readdirSync(path.dirname(cacheFile))).toEqual([path.basename(cacheFile)])
    expect(runOnce(bundleFile, cacheFile)).toMatchObject({ cache: 'accepted', unfinished: [] })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
