import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import Module, { createRequire } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import { writeFileAtomic } from '../fs/atomic-write.js'

/** Whether V8 took the code cache it was given. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'absent'

export interface CachedBundle<T> {
  exports: T
  cache: CodeCacheUse
  /**
   * Write V8's code for the bundle as it is compiled by now (after the start
   * ran, so the functions start-up called are in it), unless the cache it
   * was loaded with was taken; removes the caches of other bundles.
   */
  saveCache(): Promise<boolean>
}

/** Ahead of V8's data: its SHA-256. V8 checks no checksum in release builds, and runs or crashes on a corrupt cache. */
const DIGEST_BYTES = 32
const digestOf = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest()

/** V8's data from a cache file, or undefined when there is none; a file that fails its digest is 'corrupt'. */
function readCache(cacheFile: string): Buffer | 'corrupt' | undefined {
  let file: Buffer
  try {
    file = readFileSync(cacheFile)
  } catch {
    return undefined // none yet: this start makes it
  }
  const data = file.subarray(DIGEST_BYTES)
  return file.length > DIGEST_BYTES && digestOf(data).equals(file.subarray(0, DIGEST_BYTES)) ? data : 'corrupt'
}

/**
 * Run a CommonJS bundle (scripts/bundle-daemon.js) with a V8 code cache: a
 * daemon starting with one skips most compiling, about half its module-load
 * time (node 22's module.enableCompileCache, which node 20 lacks, does the
 * same for modules). `cacheFile`'s name must change with the bundle's content:
 * V8 checks only the source's length. A rejected cache (another node, other
 * V8 flags, a failed digest) costs nothing but the compile it would have saved.
 */
export function runCachedBundle<T>(bundleFile: string, cacheFile: string): CachedBundle<T> {
  const source = readFileSync(bundleFile, 'utf8')
  const read = readCache(cacheFile)
  const cachedData = read === 'corrupt' ? undefined : read
  const script = new vm.Script(Module.wrap(source), {
    filename: bundleFile,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  const cache: CodeCacheUse = read === 'corrupt' || script.cachedDataRejected ? 'rejected' : cachedData ? 'accepted' : 'absent'
  const module = { exports: {} as T }
  const wrapper = script.runInThisContext() as (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string) => void
  wrapper.call(module.exports, module.exports, createRequire(bundleFile), module, bundleFile, path.dirname(bundleFile))
  return {
    exports: module.exports,
    cache,
    async saveCache() {
      if (cache === 'accepted') return false
      const data = script.createCachedData()
      await writeFileAtomic(cacheFile, Buffer.concat([digestOf(data), data]))
      const dir = path.dirname(cacheFile)
      const others = (await fs.readdir(dir)).filter((name) => name !== path.basename(cacheFile) && name.endsWith(path.extname(cacheFile)))
      await Promise.all(others.map((name) => fs.rm(path.join(dir, name), { force: true })))
      return true
    },
  }
}
