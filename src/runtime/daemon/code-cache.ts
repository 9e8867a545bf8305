import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import Module, { createRequire } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import { PRIVATE_FILE_MODE, writeFileAtomic } from '../fs/atomic-write.js'
import { provenGone, thisProcess, type ProcessRecord } from '../proc/pid.js'

/** Whether V8 took the code cache it was given; 'dropped': removed unused, a start with it never finished. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'absent' | 'dropped'

export interface CachedBundle<T> {
  exports: T
  cache: CodeCacheUse
  /** With 'dropped': the pids of the starts that used the cache and never finished. */
  unfinished: number[]
  /** The start finished (V8 ran the cached code through it): its marker goes. */
  started(): void
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
 * Beside the cache while a start runs with it: `<cache>.starting-<pid>`,
 * holding that process's record (proc/pid.ts). V8 may abort the process on
 * a cache whose digest was computed over damaged data (a SIGTRAP in its
 * deserializer), or crash in code it ran from it; a marker whose process is
 * gone is that start's only trace, and the next start removes the cache.
 */
const STARTING = '.starting-'

/** The pids of starts with this cache that did not finish; their markers and the cache are removed. */
function dropAfterUnfinishedStarts(cacheFile: string): number[] {
  const dir = path.dirname(cacheFile)
  const prefix = `${path.basename(cacheFile)}${STARTING}`
  let names: string[]
  try {
    names = readdirSync(dir).filter((name) => name.startsWith(prefix))
  } catch {
    return [] // no cache directory yet
  }
  const unfinished: number[] = []
  for (const name of names) {
    const marker = path.join(dir, name)
    let record: ProcessRecord | undefined
    try {
      record = JSON.parse(readFileSync(marker, 'utf8')) as ProcessRecord
    } catch {
      // unreadable: torn by the crash it was left for
    }
    if (record && Number.isInteger(record.pid) && !provenGone(record)) continue
    unfinished.push(Number(name.slice(prefix.length)))
    rmSync(marker, { force: true })
  }
  if (unfinished.length) rmSync(cacheFile, { force: true })
  return unfinished
}

/** This start's marker, or undefined when it cannot be written (then the cache is not risked). */
function markStart(cacheFile: string): string | undefined {
  const marker = `${cacheFile}${STARTING}${process.pid}`
  try {
    writeFileSync(marker, JSON.stringify(thisProcess()), { mode: PRIVATE_FILE_MODE })
    return marker
  } catch {
    // an unwritable cache dir: this start runs without the cache rather than risk it
    return undefined
  }
}

/**
 * Run a CommonJS bundle (scripts/bundle-daemon.js) with a V8 code cache: a
 * daemon starting with one skips most compiling, about half its module-load
 * time (node 22's module.enableCompileCache, which node 20 lacks, does the
 * same for modules). `cacheFile`'s name must change with the bundle's content:
 * V8 checks only the source's length. A rejected cache (another node, other
 * V8 flags, a failed digest) costs nothing but the compile it would have saved.
 * A cache is used only by a start that left its marker, and a start that
 * finds the marker of one that did not finish removes the cache unused.
 */
export function runCachedBundle<T>(bundleFile: string, cacheFile: string): CachedBundle<T> {
  const source = readFileSync(bundleFile, 'utf8')
  const unfinished = dropAfterUnfinishedStarts(cacheFile)
  const read = readCache(cacheFile)
  const marker = read && read !== 'corrupt' ? markStart(cacheFile) : undefined
  const cachedData = marker && read !== 'corrupt' ? read : undefined
  const script = new vm.Script(Module.wrap(source), {
    filename: bundleFile,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  const rejected = read === 'corrupt' || script.cachedDataRejected
  const taken: CodeCacheUse = cachedData ? 'accepted' : 'absent'
  const cache: CodeCacheUse = unfinished.length ? 'dropped' : rejected ? 'rejected' : taken
  const module = { exports: {} as T }
  const wrapper = script.runInThisContext() as (
    exports: T,
    require: NodeJS.Require,
    module: { exports: T },
    filename: string,
    dirname: string,
  ) => void
  wrapper.call(module.exports, module.exports, createRequire(bundleFile), module, bundleFile, path.dirname(bundleFile))
  return {
    exports: module.exports,
    cache,
    unfinished,
    started() {
      if (marker) rmSync(marker, { force: true })
    },
    async saveCache() {
      if (cache === 'accepted') return false
      const data = script.createCachedData()
      await writeFileAtomic(cacheFile, Buffer.concat([digestOf(data), data]))
      const dir = path.dirname(cacheFile)
      const base = path.basename(cacheFile)
      const ext = path.extname(cacheFile)
      // other bundles' caches and their markers (this cache's markers are other starts' own)
      const ofCaches = (name: string): boolean => name.endsWith(ext) || name.includes(`${ext}${STARTING}`)
      const others = (await fs.readdir(dir)).filter((name) => !name.startsWith(base) && ofCaches(name))
      await Promise.all(others.map((name) => fs.rm(path.join(dir, name), { force: true })))
      return true
    },
  }
}
