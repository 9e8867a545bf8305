import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { isAlive } from '../../src/runtime/proc/pid.js'
import { EXAMPLES_SOURCE, PREPARED_EXAMPLES } from './prepared-examples.js'
import { until } from './eventually.js'
import { currentRun, registerStateDir, statePrefix } from './test-run.js'

/** How long a teardown waits for a stopped daemon to exit (it closes its upstreams first) before killing it. */
const STOP_WAIT_MS = 10_000

export { isAlive }

export const REPO = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))
/** package.json's bin: what a user's `tutti` runs. */
export const BIN = path.join(REPO, 'bin', 'run.cjs')
/** The bundled examples with their npm dependencies already installed (see prepared-examples.ts). */
export const EXAMPLES = PREPARED_EXAMPLES
export { EXAMPLES_SOURCE }
/** Upstream MCP servers from npm resolve on PATH, as they would for a user who installed them. */
export const NPM_BIN = path.join(REPO, 'node_modules', '.bin')

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/** A fresh state dir, named after and listed for this test run, so that the run's teardown can reap its daemon. */
export function tempStateDir(label = 'state'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${statePrefix(currentRun())}${label}-`))
  registerStateDir(dir)
  return dir
}

export function tuttiEnv(stateDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TUTTI_STATE_DIR: stateDir,
    PATH: `${NPM_BIN}${path.delimiter}${process.env.PATH ?? ''}`,
    NODE_OPTIONS: '',
    // a run inside an agent's session must not make every session the tests prepare a nested one
    TUTTI_CONNECTOR_TOKEN: undefined,
    ...extra,
  }
}

/** Run the built CLI as a user would. */
export function tutti(
  stateDir: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: tuttiEnv(stateDir, options.env), maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0
        resolve({ code, stdout, stderr })
      },
    )
    if (options.input !== undefined) child.stdin?.end(options.input)
    else child.stdin?.end()
  })
}

export async function tuttiJson<T = any>(
  stateDir: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<T> {
  const res = await tutti(stateDir, [...args, '--json'], options)
  if (res.code !== 0) throw new Error(`tutti ${args.join(' ')} exited ${res.code}: ${res.stdout}${res.stderr}`)
  return JSON.parse(res.stdout) as T
}

export function readDaemonJson(
  stateDir: string,
): { pid: number; port: number; controlToken: string; productVersion: string } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, 'daemon.json'), 'utf8'))
  } catch {
    return undefined
  }
}

/** Pids of live daemon processes serving `stateDir` (by their environment). */
export function daemonPids(stateDir: string): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (!cmd.includes('daemon/main.js')) continue
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
      if (env.includes(`TUTTI_STATE_DIR=${stateDir}`) && isAlive(pid)) out.push(pid)
    } catch {
      // process went away
    }
  }
  return out
}

/**
 * Stop the daemon for a state dir and make sure nothing is left running. A teardown, not a test of `daemon stop`
 * (daemon-lifecycle.test.ts is): the control message the CLI sends, straight from here, then a wait for the
 * daemon's exit, saves a CLI start in each of 130 teardowns.
 */
export async function cleanupState(stateDir: string): Promise<void> {
  if (daemonPids(stateDir).length) {
    // a daemon may exit before it answers; its exit below is what counts
    await control(stateDir, 'stop', { revokeSessions: true }).catch(() => undefined)
    await until(() => daemonPids(stateDir).length === 0, STOP_WAIT_MS)
  }
  for (const pid of daemonPids(stateDir)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
  fs.rmSync(stateDir, { recursive: true, force: true })
}

/** A snapshot of every path (and file content) under a directory, to prove nothing changed. */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (dir: string): void => {
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      return
    }
    for (const name of names.sort()) {
      const p = path.join(dir, name)
      const rel = path.relative(root, p)
      // the daemon writes these on its own schedule: its log, its code cache a moment after it starts, the
      // records of upstream process groups (one goes when a retired upstream ends, up to 30 s after an
      // upgrade), and each connector's log of those events
      if (rel === 'daemon.log' || rel === 'code-cache' || rel === 'upstreams') continue
      if (/^connectors\/[^/]+\/connector\.log(\.1)?$/.test(rel)) continue
      const st = fs.lstatSync(p)
      if (st.isDirectory()) {
        out[`${rel}/`] = ''
        walk(p)
      } else out[rel] = st.isFile() ? fs.readFileSync(p, 'utf8') : 'link'
    }
  }
  walk(root)
  return out
}

export function spawnTutti(stateDir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawn(process.execPath, [BIN, ...args], { env: tuttiEnv(stateDir, env), stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Live child processes of `pid` (a daemon's upstreams run in their own process groups but stay its children). */
export function childPids(pid: number): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) === pid && fields[0] !== 'Z') out.push(Number(name))
    } catch {
      // gone
    }
  }
  return out
}

/**
 * A control message straight to the daemon of `stateDir` (POST /control/<message>, with the control token
 * from daemon.json): what `tutti daemon status --json` returns, without spawning a CLI on every poll.
 */
export async function control<T = any>(stateDir: string, message: string, body: object = {}): Promise<T> {
  const info = readDaemonJson(stateDir)
  if (!info) throw new Error(`no daemon.json in ${stateDir}`)
  const res = await fetch(`http://127.0.0.1:${info.port}/control/${message}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${info.controlToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`control ${message}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

/** One connector's state as the running daemon reports it (undefined if it has none). */
export async function connectorState(stateDir: string, key: string): Promise<any> {
  return (await control<{ connectors: Array<{ key: string }> }>(stateDir, 'status')).connectors.find(
    (c) => c.key === key,
  )
}
