import fsCallback from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { ErrorCodes, TuttiError } from '../errors.js'
import { ensurePrivateDir, PRIVATE_DIR_MODE } from './atomic-write.js'

/**
 * proper-lockfile makes `<target>.lock` with a plain mkdir (0777 less the
 * umask: 0755, or 0777 under `umask 000`). Its fs is swapped for one whose
 * mkdir asks for 0700, which a umask can only narrow.
 */
const lockFs = {
  ...fsCallback,
  mkdir: (dir: string, callback: (err: NodeJS.ErrnoException | null) => void) => fsCallback.mkdir(dir, { mode: PRIVATE_DIR_MODE }, (err) => callback(err)),
}

/**
 * The one lock helper: every read-modify-write of shared state goes through
 * here with the same settings. The target need not exist; the lock is the
 * directory `<target>.lock` that proper-lockfile manages.
 */
/** A lock whose holder stopped refreshing it for this long is taken over (its holder is gone or hung). */
export const LOCK_STALE_MS = 10_000

/** How often a holder refreshes its lock. */
export const LOCK_UPDATE_MS = 2_000

const LOCK_OPTIONS = {
  stale: LOCK_STALE_MS,
  update: LOCK_UPDATE_MS,
  realpath: false,
  fs: lockFs,
  retries: { retries: 400, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
} as const

/**
 * Run `fn` holding the lock on `target`. If the lock is compromised while
 * `fn` runs (another process took it over: we stalled past the stale
 * period), `signal` aborts, `fn` must not write after it has, and the
 * operation fails with LOCK_COMPROMISED instead of racing the new holder.
 */
export async function withLock<T>(target: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  await ensurePrivateDir(path.dirname(target))
  const compromised = new AbortController()
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(target, { ...LOCK_OPTIONS, onCompromised: (err) => compromised.abort(err) })
  } catch (err) {
    throw new TuttiError(ErrorCodes.LOCK_TIMEOUT, `could not lock ${path.basename(target)}: ${(err as Error).message}`, { cause: err })
  }
  let result: T
  try {
    result = await fn(compromised.signal)
  } finally {
    // releasing a compromised lock fails (it is not ours any more): that is the case reported below
    if (!compromised.signal.aborted) await release()
  }
  if (compromised.signal.aborted) throw lockCompromised(target, compromised.signal.reason)
  return result
}

/** For `fn`s of withLock: stop before a write once the lock is no longer held. */
export function assertLockHeld(signal: AbortSignal, target: string): void {
  if (signal.aborted) throw lockCompromised(target, signal.reason)
}

function lockCompromised(target: string, reason: unknown): TuttiError {
  return new TuttiError(ErrorCodes.LOCK_COMPROMISED, `the lock on ${path.basename(target)} was taken over while this operation held it (${(reason as Error)?.message ?? 'compromised'}); nothing more was written, try again`)
}

/**
 * A lock held for the life of a process (the daemon's singleton lock).
 * `onCompromised` fires if another process broke it; the holder must stop.
 */
export async function holdLock(target: string, onCompromised: (err: Error) => void): Promise<() => Promise<void>> {
  await ensurePrivateDir(path.dirname(target))
  return lockfile.lock(target, { ...LOCK_OPTIONS, retries: 0, onCompromised })
}

/**
 * Remove a lock whose holder is provably dead (its pid no longer exists).
 * proper-lockfile would only break it after the stale period; the caller
 * has stronger evidence and wants recovery now.
 */
export async function breakOrphanedLock(target: string): Promise<void> {
  await fs.rm(`${target}.lock`, { recursive: true, force: true })
}
