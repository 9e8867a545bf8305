import { randomBytes } from 'node:crypto'
import fsCallback from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { ErrorCodes, TuttiError } from '../errors.js'
import { provenAlive, provenGone, thisProcess, type ProcessRecord } from '../proc/pid.js'
import { ensurePrivateDir, PRIVATE_DIR_MODE } from './atomic-write.js'

/** Inside `<target>.lock`: who holds it (proc/pid.ts's record), so a holder that died can be proven gone. */
export const LOCK_OWNER_FILE = 'owner'
const ownerOf = (lockDir: string): string => path.join(lockDir, LOCK_OWNER_FILE)

type Done = (err: NodeJS.ErrnoException | null) => void

/**
 * proper-lockfile makes `<target>.lock` with a plain mkdir (0777 less the
 * umask: 0755, or 0777 under `umask 000`). Its fs is swapped for one whose
 * mkdir asks for 0700, which a umask can only narrow, and writes the owner
 * record before proper-lockfile counts the lock as taken (and sets the
 * directory's mtime, which it later checks); its rmdir removes that record.
 */
const lockFs = {
  ...fsCallback,
  mkdir: (dir: string, done: Done) =>
    fsCallback.mkdir(dir, { mode: PRIVATE_DIR_MODE }, (err) => {
      if (err) return done(err)
      fsCallback.writeFile(ownerOf(dir), JSON.stringify(thisProcess()), { mode: 0o600, flag: 'wx' }, (written) => {
        // EEXIST: a breaker put a live holder's directory back over ours (breakLockOfGoneHolder): not ours to remove
        if (!written || written.code === 'EEXIST') return done(written)
        fsCallback.rmdir(dir, () => done(written))
      })
    }),
  rmdir: (dir: string, done: Done) => fsCallback.rm(ownerOf(dir), { force: true }, () => fsCallback.rmdir(dir, done)),
  rmdirSync: (dir: string) => {
    fsCallback.rmSync(ownerOf(dir), { force: true })
    fsCallback.rmdirSync(dir)
  },
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
    throw new TuttiError(
      ErrorCodes.LOCK_TIMEOUT,
      `could not lock ${path.basename(target)}: ${(err as Error).message}`,
      { cause: err },
    )
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
  const why = (reason as Error)?.message ?? 'compromised'
  return new TuttiError(
    ErrorCodes.LOCK_COMPROMISED,
    `the lock on ${path.basename(target)} was taken over while this operation held it (${why}); ` +
      `nothing more was written, try again`,
  )
}

/**
 * A lock held for the life of a process (the daemon's singleton lock).
 * `onCompromised` fires if another process broke it; the holder must stop.
 */
export async function holdLock(target: string, onCompromised: (err: Error) => void): Promise<() => Promise<void>> {
  await ensurePrivateDir(path.dirname(target))
  return lockfile.lock(target, { ...LOCK_OPTIONS, retries: 0, onCompromised })
}

/** What breakLockOfGoneHolder found. */
export type LockHolder =
  | { state: 'free' }
  | { state: 'broken'; holder: ProcessRecord }
  /**
   * Alive, or not provably gone (no record: an older tutti's lock, or one just being made; a record of another pid
   * namespace).
   */
  | { state: 'held'; why: string }

async function readOwner(lockDir: string): Promise<{ text: string; record: ProcessRecord } | undefined> {
  // no owner record (an older tutti's lock, or one being made): the caller treats it as held
  const text = await fs.readFile(ownerOf(lockDir), 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  try {
    const record = JSON.parse(text) as ProcessRecord
    return typeof record?.pid === 'number' ? { text, record } : undefined
  } catch {
    // a torn record proves nothing: treated as none
    return undefined
  }
}

/** The owner record of the lock on `target`, when it has a readable one (it may be a holder's that is gone). */
export async function lockOwner(target: string): Promise<ProcessRecord | undefined> {
  return (await readOwner(`${target}.lock`))?.record
}

/**
 * The holder of the lock on `target` while it provably holds it: its owner
 * record names a live process (proc/pid.ts), and the lock was refreshed
 * within the stale period (a holder that stopped refreshing it is taken
 * over). Undefined for a free lock, or one without a record.
 */
export async function liveLockHolder(target: string): Promise<ProcessRecord | undefined> {
  const lockDir = `${target}.lock`
  // no lock dir: the lock is free
  const [seen, stat] = await Promise.all([readOwner(lockDir), fs.stat(lockDir).catch(() => undefined)])
  if (!seen || !stat || Date.now() - stat.mtimeMs >= LOCK_STALE_MS) return undefined
  return provenAlive(seen.record) ? seen.record : undefined
}

/**
 * Take away the lock on `target` if its owner record proves its holder gone
 * (proc/pid.ts: dead pid, or a reused one), so a successor need not wait out
 * the stale period. Nothing is signalled. An unproven lock stays: it goes
 * stale by itself if its holder is gone.
 *
 * The lock is moved aside before it is removed, and removed only if what was
 * moved is the lock that was proven gone: between the check and the move a
 * competitor may have broken it and taken a new one, which is put back.
 */
export async function breakLockOfGoneHolder(target: string): Promise<LockHolder> {
  const lockDir = `${target}.lock`
  const seen = await readOwner(lockDir)
  if (!seen)
    // no lock dir: the lock is free
    return (await fs.stat(lockDir).catch(() => undefined))
      ? { state: 'held', why: 'the lock has no owner record' }
      : { state: 'free' }
  if (!provenGone(seen.record))
    return { state: 'held', why: `pid ${seen.record.pid} holds it, or cannot be proven gone` }
  const aside = `${lockDir}.gone-${randomBytes(6).toString('hex')}`
  try {
    await fs.rename(lockDir, aside)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'free' }
    throw err
  }
  const moved = await readOwner(aside)
  if (moved?.text === seen.text) {
    await fs.rm(aside, { recursive: true, force: true })
    return { state: 'broken', holder: seen.record }
  }
  // another process's new lock: back where it was, unless yet another one stands there now (its holder then finds its
  // lock taken over)
  await fs.rename(aside, lockDir).catch(() => fs.rm(aside, { recursive: true, force: true }))
  return { state: 'held', why: 'another process took the lock meanwhile' }
}
