import fs from 'node:fs'
import { reapStateDirs, type Reaped } from './reaper.js'
import os from 'node:os'
import {
  currentRun,
  knownRuns,
  newRunId,
  RUN_VAR,
  runFile,
  runOwner,
  runStateDirs,
  scratchDir,
  TMP_ROOT_VAR,
  writeRunOwner,
} from './test-run.js'

/**
 * vitest globalSetup: gives the run its id (tempStateDir() names and lists its
 * state dirs after it) and, when the run ends (passed, failed, timed out, or
 * vitest itself interrupted), reaps every daemon and upstream those state
 * dirs left running, then removes the dirs. A run that was killed outright
 * (SIGKILL, a lost CI runner) is reaped by the next run on this machine.
 */
export default function setup(): () => void {
  const run = newRunId()
  process.env[RUN_VAR] = run
  // workers, daemons and fixtures inherit TMPDIR: all they make in os.tmpdir() goes with the run
  process.env[TMP_ROOT_VAR] ??= os.tmpdir()
  fs.mkdirSync(scratchDir(run), { recursive: true })
  process.env.TMPDIR = scratchDir(run)
  writeRunOwner(run, process.pid, startTicks(process.pid) ?? '0')
  // only where /proc can tell a live owner from a dead one
  if (process.platform === 'linux')
    for (const other of knownRuns()) if (other !== run && abandoned(other)) finishRun(other)
  let finished = false
  const finish = (): void => {
    if (finished) return
    finished = true
    finishRun(run)
  }
  // vitest turns SIGINT and SIGTERM into process.exit(); 'exit' handlers run synchronously, as the reaper does
  process.on('exit', finish)
  return finish
}

/** Reap a run's daemons (reporting what it finds), remove its state dirs and its run file. */
export function finishRun(run: string, options: { quiet?: boolean } = {}): Reaped {
  const dirs = runStateDirs(run)
  const reaped = options.quiet ? reapStateDirs(dirs) : reapRun(run, dirs)
  if (!process.env.TUTTI_TEST_KEEP_STATE) {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(scratchDir(run), { recursive: true, force: true })
  }
  fs.rmSync(runFile(run), { force: true })
  return reaped
}

/** Reap without removing anything (the closing-line reporter calls this before its line). */
export function reapRun(run = currentRun(), dirs = runStateDirs(run)): Reaped {
  const reaped = reapStateDirs(dirs)
  if (reaped.daemons.length || reaped.upstreams.length) {
    process.stderr.write(
      `tests left ${reaped.daemons.length} daemon(s) and ${reaped.upstreams.length} upstream process(es) running; ` +
        `reaped (run ${run})\n`,
    )
  }
  return reaped
}

/** A run whose owner is gone (or is another process now). Run files without an owner are left to age an hour. */
function abandoned(run: string): boolean {
  const owner = runOwner(run)
  if (owner) return startTicks(owner.pid) !== owner.startTicks
  try {
    return Date.now() - fs.statSync(runFile(run)).mtimeMs > 3_600_000
  } catch {
    return false
  }
}

function startTicks(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}
