// Section "list": tools/list of every tool through tutti with 100 installed
// connectors × 50 tools (5,000 tools), with the raw client, in both eras.
// The eras are interleaved over rounds like the tools/call targets; the figure
// is the median over rounds of each round's median. The state dir is handed
// to section "start", which restarts this daemon with the same connectors.
// With BENCH_BASELINE, the baseline build's daemon gets the same connectors in
// a state dir of its own, and its two eras join the rounds; both daemons are
// started again before each round after the first (list-restart.js).
import { performance } from 'node:perf_hooks'
import { LEGACY, MODERN } from './clients.js'
import { restartDaemons } from './list-restart.js'
import { listCall, listRound, roundOrder } from './list-rounds.js'
import { sequentialLatency } from './measure.js'
import { connectRaw, rawListTools } from './raw/client.js'
import { medianOf } from './ratios.js'
import { daemonPid, stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil, withTimeout } from './wait.js'
import { prepareSession } from './targets/tutti.js'
import { connectorKey, generateConnectors } from '../fixtures/generate-connectors.js'

/**
 * @typedef {object} ListEra
 * @property {string} era
 * @property {string} [negotiated]
 * @property {number[]} rounds      median ms of each round
 * @property {number} [median]      median of the round medians
 * @property {number[]} [cpuRounds] the daemon's mean CPU ms per list of each round (measured with a baseline)
 * @property {number} [cpuMs]       their median
 * @property {number} [p99]         p99 over every sample
 * @property {number} [bytes]       HTTP body of one tools/list answer (the last page's, when paged)
 * @property {number} [withParseMedian]  median ms with the raw client's JSON.parse of the answer
 * @property {string} [error]
 */

/**
 * @typedef {object} ListSide
 * @property {ListEra[]} eras
 * @property {{ installMs?: number, readyMs?: number, error?: string }} setup
 */

/**
 * @typedef {ListSide & { connectors: number, toolsPerConnector: number, stateDir?: string, baseline?: ListSide & {
 *   commit: string, ratios?: Record<string, { perRound: number[], median: number }> } }} ListSection
 *   stateDir: this build's, for section "start"; baseline: the same with BENCH_BASELINE's build, and this build's
 *   median ÷ the baseline's per era (per round and their median)
 */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * Run `fn` over `items`, at most `limit` at a time; stops taking new items after a
 * failure and rejects with it once the running ones have settled.
 * @template T
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T) => Promise<unknown>} fn
 */
export async function pool(items, limit, fn) {
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++]
      try {
        await fn(item)
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  // settle every worker before reporting, so nothing is still running when the caller cleans up
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker))
  const rejected = results.find((r) => r.status === 'rejected')
  if (rejected && rejected.status === 'rejected') throw rejected.reason
}

/**
 * A daemon whose tools/list is measured: this build's, or the baseline's (BENCH_BASELINE), each with its own state
 * dir holding the same connectors.
 * @typedef {{ name: string, t: import('./tutti-cli.js').TuttiEnv, side: ListSide, conns: Conn[] }} Daemon
 * @typedef {import('./list-rounds.js').Conn} Conn
 */

/**
 * Install the connectors into a daemon's state dir, prepare a session and connect in both eras.
 * @param {import('./context.js').RunContext} ctx @param {Daemon} d @param {{ dir: string }[]} made
 * @param {(line: string) => void} progress
 */
async function install(ctx, d, made, progress) {
  const { cfg } = ctx
  progress(`${d.name}: installing ${made.length} connectors (${cfg.installConcurrency} at a time)`)
  const t0 = performance.now()
  let done = 0
  await pool(made, cfg.installConcurrency, async ({ dir }) => {
    await tutti(d.t, ['connector', 'install', dir])
    if (++done % 25 === 0) progress(`${d.name}: ${done}/${made.length} installed`)
  })
  d.side.setup.installMs = performance.now() - t0
  const { url, headers } = await prepareSession(d.t, 'bench-list')
  const spec = { transport: /** @type {const} */ ('streamable-http'), url, headers }
  for (const era of [LEGACY, MODERN]) {
    /** @type {ListEra} */
    const row = { era, rounds: [] }
    d.side.eras.push(row)
    try {
      const conn = await withTimeout(`${d.name} ${era} connect`, cfg.startBudgetMs, () =>
        connectRaw(spec, era, cfg.requestTimeoutMs),
      )
      row.negotiated = conn.negotiated
      d.conns.push({ row, conn, samples: [], withParse: [] })
    } catch (err) {
      row.error = message(err)
    }
  }
  return t0
}

/**
 * Wait until the daemon lists every tool (its upstreams are up), check one, note the answer's size.
 * @param {Daemon} d @param {number} total @param {number} t0  when its install began
 */
async function ready(d, total, t0) {
  const first = d.conns[0].conn
  await pollUntil(
    `${d.name}: all ${total} tools listed`,
    300_000,
    async () => (await rawListTools(first)).length === total,
    { intervalMs: 500 },
  )
  d.side.setup.readyMs = performance.now() - t0
  const tools = await rawListTools(first)
  const want = `${connectorKey(0)}_tool-00`
  if (!tools.some((x) => x.name === want)) throw new Error(`tool ${want} not listed (first: ${tools[0]?.name})`)
  const pid = daemonPid(d.t.stateDir)
  for (const c of d.conns) {
    await rawListTools(c.conn)
    c.row.bytes = c.conn.lastBytes?.()
    c.pid = pid
  }
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 * @returns {Promise<ListSection>}
 */
export async function runListSection(ctx, progress) {
  const { cfg } = ctx
  const total = cfg.listConnectors * cfg.listTools
  const label = `tools/list, ${cfg.listConnectors} connectors × ${cfg.listTools} tools`
  const stateDir = ctx.dir('tutti-list-state')
  /** @type {ListSection} */
  const out = { connectors: cfg.listConnectors, toolsPerConnector: cfg.listTools, eras: [], setup: {}, stateDir }
  /** @type {Daemon[]} */
  const daemons = [{ name: label, t: { ctx, stateDir }, side: out, conns: [] }]
  if (cfg.baseline) {
    out.baseline = { commit: cfg.baseline.commit, eras: [], setup: {} }
    const t = { ctx, stateDir: ctx.dir('tutti-base-list-state'), bin: cfg.baseline.bin }
    daemons.push({ name: `${label}, baseline ${cfg.baseline.commit}`, t, side: out.baseline, conns: [] })
  }
  try {
    const made = generateConnectors({
      outDir: ctx.dir('list-connectors'),
      count: cfg.listConnectors,
      tools: cfg.listTools,
    })
    // this build first, as without a baseline; a baseline that fails leaves this build's rows measured
    for (const d of daemons) {
      try {
        const t0 = await install(ctx, d, made, progress)
        if (d.conns.length) await ready(d, total, t0)
      } catch (err) {
        if (d.side === out) throw err
        d.side.setup.error = message(err)
        progress(`${d.name}: FAILED ${d.side.setup.error}`)
        for (const c of d.conns.splice(0)) await c.conn.close().catch(() => {})
      }
    }
    const conns = daemons.flatMap((d) => d.conns)
    if (!conns.length) return out
    for (const c of conns) {
      try {
        await sequentialLatency(listCall(c.conn, total), {
          warmup: cfg.listWarmup,
          count: 0,
          budgetMs: cfg.measureBudgetMs,
          what: 'tools/list warm-up',
        })
      } catch (err) {
        c.row.error = message(err)
      }
    }
    const base = daemons[1]?.conns ?? []
    for (let r = 0; r < cfg.rounds; r++) {
      // with a baseline, every round after the first is on two new daemon processes (list-restart.js)
      if (base.length && r > 0) await restartDaemons(ctx, daemons, { round: r, total }, progress)
      const medians = await listRound(cfg, roundOrder(conns, r), { total, round: r, callByCall: base.length > 0 })
      for (const [c, { median, cpuMs }] of medians) {
        c.row.rounds.push(median)
        if (cpuMs !== undefined) (c.row.cpuRounds ??= []).push(cpuMs)
        const who = base.includes(c) ? ` baseline ${cfg.baseline?.commit}` : ''
        const cpu = cpuMs === undefined ? '' : `, daemon CPU ${cpuMs.toFixed(2)} ms/list`
        progress(`  r${r + 1} tools/list ${c.row.era}${who}: median ${median.toFixed(2)} ms${cpu}`)
      }
    }
    for (const c of conns) {
      c.row.median = medianOf(c.row.rounds)
      if (c.row.cpuRounds) c.row.cpuMs = medianOf(c.row.cpuRounds)
      c.row.withParseMedian = medianOf(c.withParse)
      const sorted = [...c.samples].sort((a, b) => a - b)
      c.row.p99 = sorted.length ? sorted[Math.min(sorted.length, Math.ceil(0.99 * sorted.length)) - 1] : NaN
    }
    if (out.baseline) out.baseline.ratios = baselineRatios(out.eras, out.baseline.eras)
  } catch (err) {
    out.setup.error = message(err)
    progress(`${label}: FAILED ${out.setup.error}`)
  } finally {
    for (const d of daemons) {
      for (const c of d.conns) await c.conn.close().catch(() => {})
      progress(`${d.name}: ${await stopDaemon(d.t)}`)
    }
  }
  return out
}

/**
 * This build ÷ the baseline, per era and round (a row that failed stops having rounds, so round i is rounds[i] on
 * both sides), and the median over rounds: `median <era>` of the medians, `cpu <era>` of the daemon's CPU per list.
 * @param {ListEra[]} eras @param {ListEra[]} baseEras
 * @returns {Record<string, { perRound: number[], median: number }>}
 */
function baselineRatios(eras, baseEras) {
  /** @type {Record<string, { perRound: number[], median: number }>} */
  const out = {}
  for (const e of eras) {
    const b = baseEras.find((x) => x.era === e.era)
    /** @type {[string, number[], number[]][]} */
    const pairs = [
      ['median', e.rounds, b?.rounds ?? []],
      ['cpu', e.cpuRounds ?? [], b?.cpuRounds ?? []],
    ]
    for (const [name, mine, theirs] of pairs) {
      const n = Math.max(mine.length, theirs.length)
      const perRound = Array.from({ length: n }, (_, r) => (mine[r] ?? NaN) / (theirs[r] ?? NaN))
      out[`${name} ${e.era}`] = { perRound, median: medianOf(perRound) }
    }
  }
  return out
}
