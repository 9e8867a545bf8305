import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createGzip } from 'node:zlib'
import { Header } from 'tar'
import { BIN, tuttiEnv, type RunResult } from './tutti.js'

// Helpers for the hostile-release tests (test/e2e/hardening-releases.test.ts): archives written entry by entry,
// the CLI under shell limits, and what the disk holds while an install runs.

export type TarEntry = {
  path: string
  type?: string
  content?: string
  zeros?: number
  linkpath?: string
  mode?: number
}

/** A .tgz written entry by entry (headers by node-tar, content streamed), so a 1 GiB entry costs ~1 MiB on disk. */
export async function writeTgz(file: string, entries: Iterable<TarEntry>): Promise<string> {
  const gz = createGzip({ level: 1 })
  const out = fs.createWriteStream(file)
  gz.pipe(out)
  const put = async (buf: Buffer): Promise<void> => {
    if (!gz.write(buf)) await new Promise((r) => gz.once('drain', r))
  }
  const zeros = Buffer.alloc(1 << 20)
  for (const e of entries) {
    const body = e.content === undefined ? undefined : Buffer.from(e.content)
    const size = body?.length ?? e.zeros ?? 0
    const header = new Header({
      path: e.path,
      type: (e.type ?? 'File') as never,
      size,
      linkpath: e.linkpath,
      mode: e.mode ?? 0o644,
      mtime: new Date(0),
      uid: 0,
      gid: 0,
    })
    header.encode()
    await put(header.block!)
    if (body) await put(body)
    for (let left = e.zeros ?? 0; left > 0; left -= zeros.length)
      await put(left >= zeros.length ? zeros : zeros.subarray(0, left))
    if (size % 512) await put(Buffer.alloc(512 - (size % 512)))
  }
  await put(Buffer.alloc(1024))
  gz.end()
  await new Promise<void>((r) => out.on('close', () => r()))
  return file
}

/** The built CLI under extra shell limits (umask, file size); resolves with its exit code and output. */
export function tuttiSh(stateDir: string, prelude: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', `${prelude}; exec "$0" "$@"`, process.execPath, BIN, ...args],
      { env: tuttiEnv(stateDir) },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

/**
 * The largest value `sample` takes while `run` is in flight (sampled every few ms, and once at the end; the pause is
 * the sampling period, not a wait for anything).
 */
export async function peakWhile<T>(run: Promise<T>, sample: () => number): Promise<{ result: T; peak: number }> {
  let done = false
  const settled = run.finally(() => (done = true))
  let peak = 0
  while (!done) {
    peak = Math.max(peak, sample())
    await new Promise((r) => setTimeout(r, 5))
  }
  return { result: await settled, peak: Math.max(peak, sample()) }
}

/** Bytes on disk under a directory (0 if it is gone). */
export function bytesUnder(dir: string): number {
  let bytes = 0
  const walk = (d: string): void => {
    let names: string[]
    try {
      names = fs.readdirSync(d)
    } catch {
      return // removed while we looked
    }
    for (const name of names) {
      const st = fs.lstatSync(path.join(d, name), { throwIfNoEntry: false })
      if (!st) continue
      bytes += st.blocks * 512
      if (st.isDirectory()) walk(path.join(d, name))
    }
  }
  walk(dir)
  return bytes
}

/**
 * Entries under a directory, counted from directory listings alone (no stat per entry: this is sampled every few ms
 * over ~20,000 entries).
 */
export function entriesUnder(dir: string): number {
  let entries = 0
  const walk = (d: string): void => {
    let list: fs.Dirent[]
    try {
      list = fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return // removed while we looked
    }
    entries += list.length
    for (const e of list) if (e.isDirectory()) walk(path.join(d, e.name))
  }
  walk(dir)
  return entries
}
