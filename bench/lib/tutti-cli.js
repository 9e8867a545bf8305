// Running the tutti CLI against an isolated state dir, and stopping its daemon.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pidAlive, stopGroup, teardown } from './procs.js'
import { TUTTI_BIN } from './context.js'
import { pollUntil } from './wait.js'

/**
 * @typedef {object} TuttiEnv
 * @property {import('./context.js').RunContext} ctx
 * @property {string} stateDir
 * @property {string} [bin]   the CLI's bin/run.cjs: this checkout's unless given (the baseline's)
 */

/**
 * `tutti <args> --json` with TUTTI_STATE_DIR=stateDir and node_modules/.bin
 * first on PATH. Resolves the parsed JSON output; rejects with the CLI's
 * error message.
 * @param {TuttiEnv} t
 * @param {string[]} args
 * @param {Record<string, string>} [extraEnv]
 * @param {number} [timeoutMs]
 */
export function tutti(t, args, extraEnv = {}, timeoutMs = 120_000) {
  const env = t.ctx.env({ TUTTI_STATE_DIR: t.stateDir, ...extraEnv })
  if (teardown.started)
    return Promise.reject(new Error(`tutti ${args.slice(0, 2).join(' ')}: the run is being cleaned up`))
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [t.bin ?? TUTTI_BIN, ...args, '--json'],
      { env, cwd: t.ctx.runRoot, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        let parsed
        try {
          parsed = stdout.trim() ? JSON.parse(stdout) : undefined
        } catch {
          parsed = undefined
        }
        if (err) {
          const cliMessage =
            parsed?.error?.message ?? (stderr.trim().split('\n').slice(-3).join(' ') || stdout.trim().slice(0, 300))
          reject(new Error(`tutti ${args.slice(0, 2).join(' ')}: ${cliMessage || err.message}`))
          return
        }
        if (parsed === undefined) {
          reject(new Error(`tutti ${args.slice(0, 2).join(' ')}: no JSON on stdout (${stdout.trim().slice(0, 200)})`))
          return
        }
        resolve(parsed)
      },
    )
  })
}

/** The pid in stateDir/daemon.json, if any. @param {string} stateDir @returns {number | undefined} */
export function daemonPid(stateDir) {
  try {
    const info = JSON.parse(fs.readFileSync(path.join(stateDir, 'daemon.json'), 'utf8'))
    return Number.isInteger(info.pid) ? info.pid : undefined
  } catch {
    return undefined
  }
}

/**
 * `tutti daemon stop`, then make sure the daemon process is gone (its group
 * is killed if it is not). Returns a short account.
 * @param {TuttiEnv} t
 */
export async function stopDaemon(t) {
  const pid = daemonPid(t.stateDir)
  const notes = []
  try {
    const res = await tutti(t, ['daemon', 'stop'], {}, 30_000)
    notes.push(res?.stopped ? `daemon ${res.pid} stopped` : 'daemon was not running')
  } catch (err) {
    notes.push(`daemon stop failed: ${err instanceof Error ? err.message : err}`)
  }
  if (pid !== undefined) {
    try {
      await pollUntil('daemon exit', 5000, () => !pidAlive(pid), { intervalMs: 50 })
    } catch {
      notes.push(`daemon ${pid} still alive after stop: ${await stopGroup(pid, 2000)}`)
    }
  }
  return notes.join('; ')
}
