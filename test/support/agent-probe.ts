import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { eventually } from './eventually.js'
import { BIN, REPO, tuttiEnv, type RunResult } from './tutti.js'

/** What test/fixtures/agent-probe.mjs reports. */
export type ProbeEvent =
  | { event: 'start'; pid: number; ppid: number; argv0: string; argv: string[]; env: Record<string, string> }
  | { event: 'signal'; signal: string }

/**
 * A bin dir holding the probe agent as an executable `probe-agent`, and a
 * report file for it: what an exec test puts on PATH and reads back.
 */
export function probeAgent(): { bin: string; report: string; events: () => ProbeEvent[]; cleanup: () => void } {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-probe-agent-'))
  fs.copyFileSync(path.join(REPO, 'test/fixtures/agent-probe.mjs'), path.join(bin, 'probe-agent'))
  fs.chmodSync(path.join(bin, 'probe-agent'), 0o755)
  const report = path.join(bin, 'report.jsonl')
  const events = (): ProbeEvent[] => {
    const text = fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : ''
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ProbeEvent)
  }
  return { bin, report, events, cleanup: () => fs.rmSync(bin, { recursive: true, force: true }) }
}

export interface Running {
  child: ChildProcess
  done: Promise<RunResult>
}

/** `tutti <args>` as a child of its own (exec's pid is child.pid: no shell in between). */
export function startTutti(
  stateDir: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: tuttiEnv(stateDir, options.env),
    cwd: options.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  if (options.input !== undefined) child.stdin!.end(options.input)
  const done = new Promise<RunResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? -1 : 1), stdout, stderr })),
  )
  return { child, done }
}

/** The probe's events once `ok` holds for them (the bound only decides how long a broken build takes to fail). */
export const probeEvents = (events: () => ProbeEvent[], ok: (e: ProbeEvent[]) => boolean): Promise<ProbeEvent[]> =>
  eventually(events, ok)

/** Every regular file under `root` with its content (a missing root is empty). */
export function filesUnder(root: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (!fs.existsSync(root)) return out
  for (const rel of fs.readdirSync(root, { recursive: true }) as string[]) {
    const p = path.join(root, rel)
    const st = fs.lstatSync(p)
    if (st.isFile()) out[rel] = fs.readFileSync(p, 'utf8')
  }
  return out
}
