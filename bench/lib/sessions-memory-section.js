// Section "sessions-memory": five concurrent real Claude Code sessions, each
// seeing ten memory connectors and each calling two of them (session s calls
// connectors s and s+1: six distinct connectors in all), once through tutti
// (`tutti session exec --provider claude`, one daemon) and once with each
// session's own ten stdio servers (its own --mcp-config). When every session
// has its tool results (its next model request is held open), the processes
// of each setup are counted and their memory read from /proc: VmRSS, and PSS
// from smaps_rollup (shared pages divided among the processes that map them,
// so five agents of one binary are not counted five times). Tool search is
// off (ENABLE_TOOL_SEARCH=false) so the model's tool_use names loaded tools.
import path from 'node:path'
import fs from 'node:fs'
import { agentEnv, claudeBinary, launchToFirstRequest } from './claude.js'
import { TUTTI_BIN } from './context.js'
import { promptText, startFakeAnthropic, toolNames, toolResults } from './fake-anthropic.js'
import { installMemoryConnectors, memoryKey, plainMcpConfig } from './memory-connectors.js'
import { cmdline, descendants, pssKb, rssKb } from './proc-tree.js'
import { medianOf } from './ratios.js'
import { daemonPid, stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil } from './wait.js'

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * What one setup ran at the measured moment, by kind of process.
 * @typedef {Record<'agent' | 'exec' | 'daemon' | 'upstream' | 'other', { n: number, rssKb: number, pssKb: number }>}
 *   Census
 */

/** @param {number} pid @param {number | undefined} daemon @returns {keyof Census} */
function kindOf(pid, daemon) {
  if (pid === daemon) return 'daemon'
  const cmd = cmdline(pid)
  if (/server-memory|mcp-server-memory/.test(cmd)) return 'upstream'
  if (cmd.includes(`${TUTTI_BIN} session exec`)) return 'exec'
  if (/(^|\/)claude( |$)/.test(cmd)) return 'agent'
  return 'other'
}

/** @param {number[]} pids @param {number | undefined} daemon @returns {Census} */
function census(pids, daemon) {
  /** @type {Census} */
  const c = {
    agent: { n: 0, rssKb: 0, pssKb: 0 },
    exec: { n: 0, rssKb: 0, pssKb: 0 },
    daemon: { n: 0, rssKb: 0, pssKb: 0 },
    upstream: { n: 0, rssKb: 0, pssKb: 0 },
    other: { n: 0, rssKb: 0, pssKb: 0 },
  }
  for (const pid of new Set(pids)) {
    const k = c[kindOf(pid, daemon)]
    k.n++
    k.rssKb += rssKb(pid)
    k.pssKb += pssKb(pid) ?? NaN
  }
  return c
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 */
export async function runSessionsMemorySection(ctx, progress) {
  const { cfg } = ctx
  const n = cfg.sessionConnectors
  const sessions = cfg.sessions
  /** connector indexes session s calls */
  const calls = (/** @type {number} */ s) => [...new Set([s % n, (s + 1) % n])]
  const called = new Set(Array.from({ length: sessions }, (_, s) => calls(s)).flat()).size
  const out = {
    sessions,
    connectors: n,
    called,
    setups: /** @type {Array<{ id: 'tutti' | 'own', label: string, rounds: Array<Census | undefined>,
     *   error?: string }>} */ ([
      { id: 'tutti', label: `through tutti (session exec, one daemon)`, rounds: [] },
      { id: 'own', label: `each session its own ${n} stdio servers`, rounds: [] },
    ]),
    setup: /** @type {{ installMs?: number }} */ ({}),
    error: /** @type {string | undefined} */ (undefined),
  }
  const claude = claudeBinary()
  if (!claude) {
    out.error = 'Claude Code is not installed (npm ci installs @anthropic-ai/claude-code)'
    return out
  }
  const label = 'sessions-memory'
  const t = { ctx, stateDir: ctx.dir('sessions-memory-state') }
  const workspace = ctx.dir('sessions-memory-workspace')
  /** per launch marker: how the fake answers that session */
  const scripts = new Map()
  /** answers held open until every session's tool results are in and measured */
  /** @type {Set<() => void>} */
  const held = new Set()
  const release = () => {
    for (const done of held) done()
    held.clear()
  }
  const fake = await startFakeAnthropic((req) => {
    if (!toolNames(req).length) return { text: 'ok' } // a side request: no turn of the session
    const text = promptText(req)
    const entry = [...scripts.entries()].find(([marker]) => text.includes(marker))
    if (!entry) return { text: 'ok' } // a side request of the agent, or a session not scripted
    const [, s] = entry
    const results = toolResults(req)
    if (!results.length)
      return {
        toolUses: s.tools.map((/** @type {string} */ name, /** @type {number} */ i) => ({
          id: `toolu_${s.marker.replace(/\W/g, '_')}_${i}`,
          name,
          input: {},
        })),
      }
    s.results = results
    return new Promise((resolve) => {
      const done = () => resolve({ text: 'done' })
      held.add(done)
    })
  })
  try {
    out.setup.installMs = (await installMemoryConnectors(t, n, progress, label)).installMs
    for (let r = 0; r < cfg.sessionsRounds; r++) {
      const order = r % 2 ? [...out.setups].reverse() : out.setups
      for (const setup of order) {
        /** @type {Awaited<ReturnType<typeof launchToFirstRequest>>[]} */
        const runs = []
        try {
          if (setup.id === 'tutti') {
            // a fresh daemon: the upstreams an earlier round started would still be running (idle timeout 600 s)
            await stopDaemon(t)
            await tutti(t, ['daemon', 'start'])
          }
          const launches = Array.from({ length: sessions }, (_, s) => {
            const marker = `bench-sessions-r${r + 1}-${setup.id}-s${s}`
            const keys = calls(s).map(memoryKey)
            const tools = keys.map((k) =>
              setup.id === 'tutti' ? `mcp__connector__${k}_read_graph` : `mcp__${k}__read_graph`,
            )
            const script = { marker, tools, results: /** @type {any[] | undefined} */ (undefined) }
            scripts.set(marker, script)
            const home = ctx.dir(`agent-homes/${marker}`)
            const env = agentEnv(ctx, { home, origin: fake.origin, extra: { ENABLE_TOOL_SEARCH: 'false' } })
            const args = ['-p', `${marker}: read the graphs`, '--strict-mcp-config', '--allowedTools', tools.join(',')]
            if (setup.id === 'tutti')
              return {
                script,
                name: marker,
                command: process.execPath,
                marker,
                args: [TUTTI_BIN, 'session', 'exec', '--provider', 'claude', '--', claude, ...args],
                env: { ...env, TUTTI_STATE_DIR: t.stateDir },
              }
            const config = path.join(ctx.dir('sessions-memory-configs'), `${marker}.json`)
            fs.writeFileSync(config, JSON.stringify(plainMcpConfig(n, ctx.dir(`sessions-memory-data/${marker}`))))
            return { script, name: marker, command: claude, marker, args: ['--mcp-config', config, ...args], env }
          })
          const started = await Promise.allSettled(
            launches.map(({ script: _s, ...spec }) => launchToFirstRequest(ctx, fake, { ...spec, cwd: workspace })),
          )
          for (const s of started) if (s.status === 'fulfilled') runs.push(s.value)
          const failed = started.find((s) => s.status === 'rejected')
          if (failed && failed.status === 'rejected') throw failed.reason
          await pollUntil(
            `${label} ${setup.id}: every session's tool results`,
            300_000,
            () => launches.every((l) => l.script.results),
            { intervalMs: 50, abort: () => (runs.some((x) => x.proc.exited()) ? 'a session exited first' : undefined) },
          )
          const errors = launches.flatMap((l) =>
            (l.script.results ?? []).filter((x) => x.is_error).map((x) => `${l.marker}: ${JSON.stringify(x.content)}`),
          )
          if (errors.length) throw new Error(`tool calls failed: ${errors.join('; ').slice(0, 400)}`)
          const daemon = setup.id === 'tutti' ? daemonPid(t.stateDir) : undefined
          const pids = runs.flatMap((x) => [x.proc.pid, ...descendants(x.proc.pid)])
          if (daemon !== undefined) pids.push(daemon, ...descendants(daemon))
          const c = census(pids, daemon)
          setup.rounds[r] = c
          const mb = (/** @type {number} */ kb) => (kb / 1024).toFixed(0)
          const all = Object.values(c).reduce((a, k) => ({ rss: a.rss + k.rssKb, pss: a.pss + k.pssKb }), {
            rss: 0,
            pss: 0,
          })
          progress(
            `${label} r${r + 1} ${setup.id}: ${c.upstream.n} upstream processes; RSS ${mb(all.rss)} MB, ` +
              `PSS ${mb(all.pss)} MB (agents ${mb(c.agent.pssKb)}, exec ${mb(c.exec.pssKb)}, daemon ` +
              `${mb(c.daemon.pssKb)}, upstreams ${mb(c.upstream.pssKb)}, other ${c.other.n})`,
          )
        } catch (err) {
          setup.error = `round ${r + 1}: ${message(err)}`
          progress(`${label} r${r + 1} ${setup.id}: FAILED ${setup.error}`)
        } finally {
          release()
          const ends = await Promise.all(runs.map((x) => x.finish()))
          const bad = ends.filter((e) => !/code 0/.test(e.exit))
          if (bad.length) progress(`${label} r${r + 1} ${setup.id}: ${bad.map((e) => e.exit).join(', ')}`)
          for (const l of scripts.keys()) scripts.delete(l)
          fs.rmSync(path.join(ctx.runRoot, 'agent-homes'), { recursive: true, force: true })
        }
      }
    }
  } catch (err) {
    out.error = message(err)
    progress(`${label}: FAILED ${out.error}`)
  } finally {
    release()
    await fake.close()
    progress(`${label}: ${await stopDaemon(t)}`)
  }
  return out
}

/**
 * Medians over rounds of a setup's census: processes and memory by kind, and in all.
 * @param {Array<Census | undefined>} rounds
 */
export function censusSummary(rounds) {
  const ok = /** @type {Census[]} */ (rounds.filter(Boolean))
  /** @param {(c: Census) => number} f */
  const med = (f) => medianOf(ok.map(f))
  const kinds = /** @type {(keyof Census)[]} */ (['agent', 'exec', 'daemon', 'upstream', 'other'])
  const sum = (/** @type {Census} */ c, /** @type {'n' | 'rssKb' | 'pssKb'} */ f) =>
    kinds.reduce((a, k) => a + c[k][f], 0)
  return {
    rounds: ok.length,
    processes: med((c) => sum(c, 'n')),
    upstreams: med((c) => c.upstream.n),
    rssMb: med((c) => sum(c, 'rssKb') / 1024),
    pssMb: med((c) => sum(c, 'pssKb') / 1024),
    byKind: Object.fromEntries(
      kinds.map((k) => [
        k,
        { n: med((c) => c[k].n), rssMb: med((c) => c[k].rssKb / 1024), pssMb: med((c) => c[k].pssKb / 1024) },
      ]),
    ),
  }
}
