import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * One test run's state dirs, so that its teardown (global-teardown.ts) can
 * reap their daemons. The run id comes from the global setup through the
 * environment, which every vitest worker inherits. Each state dir is both
 * named after the run (`tutti-suite-<run>-<label>-XXXXXX`) and listed in a
 * run file under os.tmpdir(): the prefix still finds a dir whose line was
 * lost, the file still finds a dir made elsewhere.
 */
export const RUN_VAR = 'TUTTI_TEST_RUN'
/** The machine's own temporary dir, kept by the global setup before it points TMPDIR at the run's scratch dir. */
export const TMP_ROOT_VAR = 'TUTTI_TEST_TMP_ROOT'

/** Where run files and scratch dirs live: the machine's temporary dir, whatever TMPDIR says inside a run. */
export const tmpRoot = (): string => process.env[TMP_ROOT_VAR] ?? os.tmpdir()

/**
 * The run's scratch dir: every os.tmpdir() of its workers, daemons and
 * fixtures (TMPDIR points here), removed with the run, so that a run leaves
 * no fixture releases, packages or probes behind in the machine's /tmp.
 */
export const scratchDir = (run: string): string => path.join(tmpRoot(), `tutti-test-tmp-${run}`)

/** A run id for code that runs outside vitest's global setup (a script, a single worker): one per process. */
const fallbackRun = `solo${randomBytes(4).toString('hex')}`

export function currentRun(): string {
  return process.env[RUN_VAR] ?? fallbackRun
}

export const newRunId = (): string => randomBytes(4).toString('hex')

export const runFile = (run: string): string => path.join(tmpRoot(), `tutti-test-run-${run}.dirs`)

export const statePrefix = (run: string): string => `tutti-suite-${run}-`

/** The run file starts with its owner, so that a later run can tell whether it is still going. */
export function writeRunOwner(run: string, pid: number, startTicks: string): void {
  fs.writeFileSync(runFile(run), `owner ${pid} ${startTicks}\n`, { flag: 'a' })
}

export function registerStateDir(dir: string, run = currentRun()): void {
  // O_APPEND: lines from concurrent workers do not interleave
  fs.appendFileSync(runFile(run), `${dir}\n`)
}

export function runOwner(run: string): { pid: number; startTicks: string } | undefined {
  const m = /^owner (\d+) (\d+)$/m.exec(readOr(runFile(run)))
  return m ? { pid: Number(m[1]), startTicks: m[2]! } : undefined
}

/** Every state dir of a run: those in its run file and those named after it. */
export function runStateDirs(run: string): string[] {
  const listed = readOr(runFile(run))
    .split('\n')
    .filter((l) => path.isAbsolute(l))
  const named = [tmpRoot(), scratchDir(run)].flatMap((parent) =>
    readDirOr(parent)
      .filter((n) => n.startsWith(statePrefix(run)))
      .map((n) => path.join(parent, n)),
  )
  return [...new Set([...listed, ...named])]
}

/** Runs that left a run file behind (their own, or a crashed one's). */
export function knownRuns(): string[] {
  return readDirOr(tmpRoot())
    .map((n) => /^tutti-test-run-([a-z0-9]+)\.dirs$/.exec(n)?.[1])
    .filter((r): r is string => r !== undefined)
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

function readDirOr(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch {
    return []
  }
}
