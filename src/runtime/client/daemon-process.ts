import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { ErrorCodes, TuttiError } from '../errors.js'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'

/**
 * The daemon's entry: the one `npm run build` makes (scripts/bundle-daemon.js:
 * the daemon as one bundle, run with a V8 code cache), or tsc's module graph
 * it was made from. Neither loads a CLI framework.
 */
export const DAEMON_BUNDLE = fileURLToPath(new URL('../../daemon/main.js', import.meta.url))
export const DAEMON_MODULES_ENTRY = fileURLToPath(new URL('../daemon/main.js', import.meta.url))

/** Present only in a source checkout: a package ships dist/ without src/. */
const SOURCE_ENTRY = fileURLToPath(new URL('../../../src/runtime/daemon/main.ts', import.meta.url))

type ChooseBuild = (builds: { bundle: string; modules: string; source: string }) => 'bundle' | 'modules'
/** bin/build-choice.cjs, the rule the CLI's lean entry uses too: three levels up from src/ and dist/ alike. */
const { chooseBuild } = createRequire(import.meta.url)('../../../bin/build-choice.cjs') as { chooseBuild: ChooseBuild }

/** The bundle or the modules, by the one rule (bin/build-choice.cjs). */
export function daemonEntry(bundle = DAEMON_BUNDLE, modules = DAEMON_MODULES_ENTRY, source = SOURCE_ENTRY): string {
  return chooseBuild({ bundle, modules, source }) === 'bundle' ? bundle : modules
}

/** Signals a crash ends a process with (V8's fatal errors trap or abort), as opposed to one that was stopped. */
export const CRASH_SIGNALS: ReadonlySet<string> = new Set([
  'SIGTRAP',
  'SIGABRT',
  'SIGSEGV',
  'SIGILL',
  'SIGBUS',
  'SIGFPE',
])

export interface SpawnedDaemon {
  pid: number
  exited: () => boolean
  /** The signal it crashed with, once it has. */
  crashed: () => NodeJS.Signals | undefined
}

/** Spawn a detached daemon whose output goes to daemon.log. */
export async function spawnDaemon(paths: StatePaths): Promise<SpawnedDaemon> {
  await ensurePrivateDir(paths.root)
  const logFd = fs.openSync(paths.daemonLog, 'a', 0o600)
  let exited = false
  let crashed: NodeJS.Signals | undefined
  try {
    const child = spawn(process.execPath, [daemonEntry()], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: paths.root,
      env: { ...process.env, TUTTI_STATE_DIR: paths.root },
    })
    child.on('exit', (_code, signal) => {
      exited = true
      if (signal && CRASH_SIGNALS.has(signal)) crashed = signal
    })
    child.on('error', () => {
      exited = true
    })
    child.unref()
    if (child.pid === undefined) throw new TuttiError(ErrorCodes.DAEMON_START_FAILED, 'spawn returned no pid')
    return { pid: child.pid, exited: () => exited, crashed: () => crashed }
  } finally {
    fs.closeSync(logFd)
  }
}

/** The last lines of daemon.log that explain why a start failed. */
export function logTail(paths: StatePaths, lines = 5): string {
  try {
    const text = fs.readFileSync(paths.daemonLog, 'utf8')
    return text.trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    // no log to quote (never written, or removed): the caller still says the start failed
    return '(no daemon.log)'
  }
}
