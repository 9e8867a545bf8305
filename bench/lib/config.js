// Benchmark parameters, from the environment.
//
//   BENCH_QUICK=1                quick mode (small counts; the defaults below in brackets)
//   BENCH_CALLS                  timed sequential tools/call per target   500 [100]
//   BENCH_WARMUP                 untimed warm-up calls before them          50 [10]
//   BENCH_CONCURRENT_CALLS       tools/call in the throughput run         2000 [300]
//   BENCH_CONCURRENCY            calls in flight in the throughput run     16 [16]
//   BENCH_LIST_CALLS             timed tools/list per target               100 [20]
//   BENCH_LIST_WARMUP            untimed tools/list before them             10 [3]
//   BENCH_LIST_CONNECTORS        connectors for the tools/list section     100 [100]
//   BENCH_LIST_TOOLS             tools per fixture connector                50 [50]
//   BENCH_INSTALL_CONCURRENCY    `connector install` run at once             4 [4]
//   BENCH_TARGETS                comma list to run only some targets: direct,tutti,mcp-proxy,supergateway,mcp-hub
//   BENCH_SECTIONS               comma list: call,list (default both)
//   BENCH_CLIENTS                comma list for section 1: sdk,raw (default both; raw = the node:http client, HTTP targets only)
//   BENCH_KEEP_TMP=1             keep the run's temp dir (logs, state dirs)

function int(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`)
  return n
}

function list(name, fallback) {
  const raw = process.env[name]
  if (!raw) return fallback
  return raw.split(',').map((s) => s.trim()).filter(Boolean)
}

export const ALL_TARGETS = ['direct', 'tutti', 'mcp-proxy', 'supergateway', 'mcp-hub']
export const ALL_CLIENTS = ['sdk', 'raw']

/**
 * @typedef {ReturnType<typeof loadConfig>} BenchConfig
 */
export function loadConfig() {
  const quick = process.env.BENCH_QUICK === '1' || process.env.BENCH_QUICK === 'true'
  const cfg = {
    quick,
    calls: int('BENCH_CALLS', quick ? 100 : 500),
    warmup: int('BENCH_WARMUP', quick ? 10 : 50),
    concurrentCalls: int('BENCH_CONCURRENT_CALLS', quick ? 300 : 2000),
    concurrency: Math.max(1, int('BENCH_CONCURRENCY', 16)),
    listCalls: int('BENCH_LIST_CALLS', quick ? 20 : 100),
    listWarmup: int('BENCH_LIST_WARMUP', quick ? 3 : 10),
    listConnectors: Math.min(1000, int('BENCH_LIST_CONNECTORS', 100)),
    listTools: Math.min(1000, Math.max(1, int('BENCH_LIST_TOOLS', 50))),
    installConcurrency: Math.max(1, int('BENCH_INSTALL_CONCURRENCY', 4)),
    targets: list('BENCH_TARGETS', ALL_TARGETS),
    sections: list('BENCH_SECTIONS', ['call', 'list']),
    clients: list('BENCH_CLIENTS', ALL_CLIENTS),
    keepTmp: process.env.BENCH_KEEP_TMP === '1',
    /** Wall-clock budget of one measurement loop. */
    measureBudgetMs: 10 * 60_000,
    /** Budget for a target to start (spawn, handshake, first tools/list). */
    startBudgetMs: 60_000,
    /** Per-request timeout given to the SDK client and the raw client. */
    requestTimeoutMs: 30_000,
  }
  for (const t of cfg.targets) if (!ALL_TARGETS.includes(t)) throw new Error(`BENCH_TARGETS: unknown target "${t}" (known: ${ALL_TARGETS.join(', ')})`)
  for (const c of cfg.clients) if (!ALL_CLIENTS.includes(c)) throw new Error(`BENCH_CLIENTS: unknown client "${c}" (known: ${ALL_CLIENTS.join(', ')})`)
  return cfg
}
