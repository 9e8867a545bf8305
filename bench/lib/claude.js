// The real Claude Code from npm, started the way the agent sections need it:
// offline (as the e2e tests run it: test/support/agents.ts CLAUDE_OFFLINE),
// against the fake Anthropic API, with an isolated HOME per launch, in its
// own process group (so its stdio MCP servers, or `tutti session exec` in
// front of it, go with it), its output in a log file of the run.
import fs from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { NODE_MODULES } from './context.js'
import { promptText } from './fake-anthropic.js'
import { logTail, RUN_MARKER, spawnGroup, stopProc } from './procs.js'
import { pollUntil } from './wait.js'

/** Offline switches: no auto-update, no plugin sync, no telemetry (what the e2e tests set). */
export const CLAUDE_OFFLINE = { DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' }

/** The Claude Code binary (the platform package works even if the postinstall did not run), or undefined. */
export function claudeBinary() {
  const candidates = [
    path.join(NODE_MODULES, '@anthropic-ai/claude-code-linux-x64/claude'),
    path.join(NODE_MODULES, '.bin/claude'),
  ]
  return candidates.find((p) => fs.existsSync(p))
}

/** Claude Code's version, from its package. */
export function claudeVersion() {
  try {
    return JSON.parse(fs.readFileSync(path.join(NODE_MODULES, '@anthropic-ai/claude-code/package.json'), 'utf8'))
      .version
  } catch {
    return 'missing'
  }
}

/**
 * ENABLE_TOOL_SEARCH for the agents: BENCH_TOOL_SEARCH=true|false sets it, unset leaves Claude Code's default
 * (tool search on: MCP tools are named in the prompt and loaded on demand).
 * @returns {Record<string, string>}
 */
export function toolSearchEnv() {
  const v = process.env.BENCH_TOOL_SEARCH
  return v === undefined || v === '' ? {} : { ENABLE_TOOL_SEARCH: v }
}

/**
 * A minimal environment for one launch: nothing of the harness's own
 * environment but PATH (no token of a session the harness may run in, no
 * ANTHROPIC_* or CLAUDE_* of the shell), plus the run marker the reaper
 * looks for.
 * @param {import('./context.js').RunContext} ctx
 * @param {{ home: string, origin: string, extra?: Record<string, string> }} o
 * @returns {NodeJS.ProcessEnv}
 */
export function agentEnv(ctx, { home, origin, extra = {} }) {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    [RUN_MARKER]: ctx.runId,
    ...CLAUDE_OFFLINE,
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_API_KEY: 'sk-ant-bench-fake',
    ...toolSearchEnv(),
    ...extra,
  }
}

/**
 * Start one agent (Claude Code, or `tutti session exec` in front of it) in its
 * own process group and time it to its first model request: the first request
 * to the fake whose prompt holds `marker` (a text unique to this launch).
 * Resolves with that request and the time; the agent keeps running
 * (`finish()` waits for its exit, bounded, then stops its group).
 * @param {import('./context.js').RunContext} ctx
 * @param {import('./fake-anthropic.js').FakeAnthropic} fake
 * @param {{ name: string, command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, marker: string,
 *   budgetMs?: number }} o
 */
export async function launchToFirstRequest(ctx, fake, { name, command, args, env, cwd, marker, budgetMs = 180_000 }) {
  const logFile = path.join(ctx.dir('agent-logs'), `${name}.log`)
  /** @type {import('./fake-anthropic.js').ModelRequest | undefined} */
  let first
  const off = fake.onRequest((req) => {
    if (!first && promptText(req).includes(marker)) first = req
  })
  const t0 = performance.now()
  const proc = await spawnGroup(name, command, args, { env, cwd, logFile })
  const finish = async (ms = 60_000) => {
    const t1 = performance.now()
    let exit = ''
    try {
      await pollUntil(`${name} exit`, ms, () => proc.exited(), { intervalMs: 20 })
      exit = proc.exitReason()
    } catch {
      exit = 'did not exit in time'
    }
    const exitedAfterMs = performance.now() - t1
    const how = await stopProc(proc, 3000)
    return { exit, exitedAfterMs, stopped: how }
  }
  try {
    await pollUntil(`${name}: first model request`, budgetMs, () => first, {
      intervalMs: 5,
      abort: () =>
        proc.exited() ? `exited (${proc.exitReason()}) first; log: ${logTail(logFile, 4).replace(/\s+/g, ' ')}` : '',
    })
  } catch (err) {
    off()
    await stopProc(proc, 3000)
    throw err
  } finally {
    off()
  }
  const req = /** @type {import('./fake-anthropic.js').ModelRequest} */ (first)
  return { ms: req.at - t0, request: req, proc, logFile, finish }
}
