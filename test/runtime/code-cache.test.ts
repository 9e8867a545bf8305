import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { expect, it } from 'vitest'
import { REPO } from '../support/tutti.js'

/** A CommonJS bundle with enough functions for V8 to cache, and what a module sees of its wrapper. */
const BUNDLE = `"use strict";
const parts = [];
for (let i = 0; i < 200; i++) parts.push((x) => x * i);
exports.sum = (x) => parts.reduce((n, f) => n + f(x), 0);
exports.seen = { filename: __filename, dirname: __dirname, requires: typeof require('node:path').join, strict: (function () { return this === undefined })() };
`

/**
 * One daemon start's worth, in a process of its own (V8 keeps what it
 * compiled for the rest of a process, so a second run in this one would
 * never read the cache): the built code-cache module runs the bundle, then
 * saves the cache.
 */
function runOnce(bundleFile: string, cacheFile: string): { cache: string; sum: number; seen: object; saved: boolean } {
  const module = pathToFileURL(path.join(REPO, 'dist/runtime/daemon/code-cache.js')).href
  const script = `const { runCachedBundle } = await import(${JSON.stringify(module)})
const b = runCachedBundle(${JSON.stringify(bundleFile)}, ${JSON.stringify(cacheFile)})
const sum = b.exports.sum(1)
console.log(JSON.stringify({ cache: b.cache, sum, seen: b.exports.seen, saved: await b.saveCache() }))`
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))
}

it('runs a CommonJS bundle, saves its code cache, and the next start takes it; a cache it cannot use is replaced', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-code-cache-'))
  try {
    const bundleFile = path.join(dir, 'bundle-0123.cjs')
    fs.writeFileSync(bundleFile, BUNDLE)
    const cacheDir = path.join(dir, 'code-cache')
    const cacheFile = path.join(cacheDir, 'bundle-0123-v8-x.cache')
    fs.mkdirSync(cacheDir, { mode: 0o700 })
    fs.writeFileSync(path.join(cacheDir, 'bundle-old-v8-x.cache'), 'an older bundle')

    expect(runOnce(bundleFile, cacheFile)).toEqual({ cache: 'absent', sum: 19_900, seen: { filename: bundleFile, dirname: dir, requires: 'function', strict: true }, saved: true })
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
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
