// Benchmark parameters, from the environment. Defaults; quick mode (BENCH_QUICK=1) in brackets.
//
//   BENCH_ROUNDS                 interleaved rounds of the tools/call targets      7 [2]
//   BENCH_CALLS                  timed sequential tools/call per target per round  200 [50]
//   BENCH_ROUND_WARMUP           untimed calls with N in flight, per row and round 500 [100]
//   BENCH_WARMUP                 untimed sequential calls after them                30 [10]
//   BENCH_CONCURRENT_CALLS       tools/call in each throughput run               6000 [300]
//   BENCH_BURSTS                 bursts it is split into, interleaved over rows    6 [2]
//   BENCH_WARMUP_BURST           untimed tools/call with N in flight per row,     3000 [300]
//                                before round 1 (JIT of client, gateway, upstream)
//   BENCH_CONCURRENCY            calls in flight in the throughput run             16 [16]
//   BENCH_LIST_CALLS             timed tools/list per era per round                 15 [5]
//                                (60 [15] with BENCH_BASELINE: a round's mean CPU per list of each build)
//   BENCH_LIST_WARMUP            untimed tools/list per era before the rounds        5 [2]
//   BENCH_LIST_CONNECTORS        connectors for tools/list and daemon start        100 [100]
//   BENCH_LIST_TOOLS             tools per fixture connector                        50 [50]
//   BENCH_INSTALL_CONCURRENCY    `connector install` run at once                     4 [4]
//   BENCH_START_ROUNDS           daemon (re)starts with the installed connectors     3 [1]
//   BENCH_CLI_RUNS               `connector available` and `node -e 0` runs each    20 [5]
//   BENCH_SHIM_RUNS              shim and direct entrypoint runs each               50 [10]
//   BENCH_FORK_RUNS              daemon fork-to-healthy runs                          5 [2]
//   BENCH_RECOVERY_RUNS          kill -9 recovery runs                                5 [2]
//   BENCH_AGENT_ROUNDS           interleaved rounds of Claude Code launches (agent-start) 5 [2]
//   BENCH_AGENT_CONNECTORS       memory connectors of agent-start                   25 [25]
//   BENCH_SESSIONS               concurrent Claude Code sessions (sessions-memory)   5 [5]
//   BENCH_SESSION_CONNECTORS     connectors each of them sees                       10 [10]
//   BENCH_SESSIONS_ROUNDS        rounds of both setups (sessions-memory)             3 [1]
//   BENCH_VIEW_SESSIONS          sessions per kind of view (views)                  100 [100]
//   BENCH_VIEW_CONNECTORS        fixture connectors installed (views)                20 [20]
//   BENCH_VIEW_TOOLS             tools per fixture connector (views)                 20 [20]
//   BENCH_VIEW_LIST_CALLS        sequential tools/list per kind per round           100 [30]
//   BENCH_VIEW_LIST_BURST        tools/list with N in flight per kind per round     800 [100]
//   BENCH_TOOL_SEARCH            ENABLE_TOOL_SEARCH for agent-start (unset: Claude Code's default, on)
//   BENCH_TARGETS                tools/call targets: direct,floor,tutti,mcp-proxy,supergateway,mcp-hub
//                                (and tutti-base, by default when BENCH_BASELINE is set)
//   BENCH_BASELINE               a built tutti checkout measured beside this one (call: target
//                                tutti-base; list: baseline rows); unset: no baseline
//   BENCH_SECTIONS               call,list,start,cli,bridge,agent-start,sessions-memory,views
//                                (start needs list: it restarts list's daemon)
//   BENCH_CLIENTS                raw (default) or raw,sdk: sdk adds SDK-client rows for the HTTP targets
//                                (direct stdio always uses the SDK client: it has no HTTP)
//   BENCH_KEEP_TMP=1             keep the run's temp dir (logs, state dirs)

import { loadBaseline } from './baseline.js'

/** @param {string} name @param {number} fallback */
function int(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`)
  return n
}

/** @param {string} name @param {string[]} fallback */
function list(name, fallback) {
  const raw = process.env[name]
  if (!raw) return fallback
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

export const ALL_TARGETS = ['direct', 'floor', 'tutti', 'mcp-proxy', 'supergateway', 'mcp-hub', 'tutti-base']
/** The targets run when BENCH_TARGETS is unset: all, tutti-base only with a baseline. */
const DEFAULT_TARGETS = ALL_TARGETS.filter((t) => t !== 'tutti-base')
export const ALL_CLIENTS = ['sdk', 'raw']
export const ALL_SECTIONS = ['call', 'list', 'start', 'cli', 'bridge', 'agent-start', 'sessions-memory', 'views']

/**
 * @typedef {ReturnType<typeof loadConfig>} BenchConfig
 */
export function loadConfig() {
  const quick = process.env.BENCH_QUICK === '1' || process.env.BENCH_QUICK === 'true'
  /** @param {number} full @param {number} small */
  const q = (full, small) => (quick ? small : full)
  const baseline = loadBaseline(process.env.BENCH_BASELINE)
  const cfg = {
    quick,
    rounds: Math.max(1, int('BENCH_ROUNDS', q(7, 2))),
    calls: Math.max(1, int('BENCH_CALLS', q(200, 50))),
    warmup: int('BENCH_WARMUP', q(30, 10)),
    roundWarmup: int('BENCH_ROUND_WARMUP', q(500, 100)),
    concurrentCalls: Math.max(1, int('BENCH_CONCURRENT_CALLS', q(6000, 300))),
    bursts: Math.max(1, int('BENCH_BURSTS', q(6, 2))),
    warmupBurst: int('BENCH_WARMUP_BURST', q(3000, 300)),
    concurrency: Math.max(1, int('BENCH_CONCURRENCY', 16)),
    listCalls: Math.max(1, int('BENCH_LIST_CALLS', baseline ? q(60, 15) : q(15, 5))),
    listWarmup: int('BENCH_LIST_WARMUP', q(5, 2)),
    listConnectors: Math.min(1000, Math.max(1, int('BENCH_LIST_CONNECTORS', 100))),
    listTools: Math.min(1000, Math.max(1, int('BENCH_LIST_TOOLS', 50))),
    installConcurrency: Math.max(1, int('BENCH_INSTALL_CONCURRENCY', 4)),
    startRounds: Math.max(1, int('BENCH_START_ROUNDS', q(3, 1))),
    cliRuns: Math.max(1, int('BENCH_CLI_RUNS', q(20, 5))),
    shimRuns: Math.max(1, int('BENCH_SHIM_RUNS', q(50, 10))),
    forkRuns: Math.max(1, int('BENCH_FORK_RUNS', q(5, 2))),
    recoveryRuns: Math.max(1, int('BENCH_RECOVERY_RUNS', q(5, 2))),
    agentRounds: Math.max(1, int('BENCH_AGENT_ROUNDS', q(5, 2))),
    agentConnectors: Math.min(100, Math.max(1, int('BENCH_AGENT_CONNECTORS', 25))),
    sessions: Math.min(20, Math.max(1, int('BENCH_SESSIONS', 5))),
    sessionConnectors: Math.min(50, Math.max(2, int('BENCH_SESSION_CONNECTORS', 10))),
    sessionsRounds: Math.max(1, int('BENCH_SESSIONS_ROUNDS', q(3, 1))),
    viewSessions: Math.min(1000, Math.max(1, int('BENCH_VIEW_SESSIONS', 100))),
    viewConnectors: Math.min(100, Math.max(2, int('BENCH_VIEW_CONNECTORS', 20))),
    viewTools: Math.min(200, Math.max(1, int('BENCH_VIEW_TOOLS', 20))),
    viewListCalls: Math.max(1, int('BENCH_VIEW_LIST_CALLS', q(100, 30))),
    viewListBurst: Math.max(1, int('BENCH_VIEW_LIST_BURST', q(800, 100))),
    targets: list('BENCH_TARGETS', baseline ? ALL_TARGETS : DEFAULT_TARGETS),
    baseline,
    sections: list('BENCH_SECTIONS', ALL_SECTIONS),
    clients: list('BENCH_CLIENTS', ['raw']),
    keepTmp: process.env.BENCH_KEEP_TMP === '1',
    /** Wall-clock budget of one measurement loop. */
    measureBudgetMs: 10 * 60_000,
    /** Budget for a target to start (spawn, handshake, first tools/list). */
    startBudgetMs: 60_000,
    /** Per-request timeout given to the SDK client and the raw client. */
    requestTimeoutMs: 30_000,
  }
  for (const t of cfg.targets)
    if (!ALL_TARGETS.includes(t))
      throw new Error(`BENCH_TARGETS: unknown target "${t}" (known: ${ALL_TARGETS.join(', ')})`)
  if (cfg.targets.includes('tutti-base') && !baseline)
    throw new Error('BENCH_TARGETS: "tutti-base" needs BENCH_BASELINE=<a built tutti checkout>')
  for (const c of cfg.clients)
    if (!ALL_CLIENTS.includes(c))
      throw new Error(`BENCH_CLIENTS: unknown client "${c}" (known: ${ALL_CLIENTS.join(', ')})`)
  for (const s of cfg.sections)
    if (!ALL_SECTIONS.includes(s))
      throw new Error(`BENCH_SECTIONS: unknown section "${s}" (known: ${ALL_SECTIONS.join(', ')})`)
  if (cfg.sections.includes('start') && !cfg.sections.includes('list'))
    throw new Error('BENCH_SECTIONS: "start" restarts the daemon "list" populated; add "list"')
  return cfg
}
