// Section "list": tools/list of every tool through tutti with 100 installed
// connectors × 50 tools (5,000 tools), with the raw client, in both eras.
// The eras are interleaved over rounds like the tools/call targets; the figure
// is the median over rounds of each round's median. The state dir is handed
// to section "start", which restarts this daemon with the same connectors.
import { performance } from 'node:perf_hooks'
import { LEGACY, MODERN } from './clients.js'
import { sequentialLatency } from './measure.js'
import { connectRaw, rawListTools } from './raw/client.js'
import { medianOf } from './ratios.js'
import { stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil, withTimeout } from './wait.js'
import { prepareSession } from './targets/tutti.js'
import { connectorKey, generateConnectors } from '../fixtures/generate-connectors.js'

/** @typedef {import('./raw/streamable.js').RawConnection} RawConnection */

/**
 * @typedef {object} ListEra
 * @property {string} era
 * @property {string} [negotiated]
 * @property {number[]} rounds      median ms of each round
 * @property {number} [median]      median of the round medians
 * @property {number} [p99]         p99 over every sample
 * @property {number} [bytes]       HTTP body of one tools/list answer (the last page's, when paged)
 * @property {number} [withParseMedian]  median ms with the raw client's JSON.parse of the answer
 * @property {string} [error]
 */

/**
 * @typedef {object} ListSection
 * @property {number} connectors
 * @property {number} toolsPerConnector
 * @property {ListEra[]} eras
 * @property {{ installMs?: number, readyMs?: number, error?: string }} setup
 * @property {string} [stateDir]    for section "start"
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

/** A checked whole-list call: every page, the expected count. */
/**
 * One checked tools/list. Its latency is to the last byte of the answer; the
 * raw client's JSON.parse of 2 MiB (≈4-9 ms on these machines) is the
 * client's cost, kept apart in `withParse` for the notes.
 */
/** @param {RawConnection} conn @param {number} expected @param {number[]} [withParse] */
function listCall(conn, expected, withParse) {
  return async () => {
    const t0 = performance.now()
    const tools = await rawListTools(conn)
    const done = performance.now()
    if (tools.length !== expected) throw new Error(`tools/list returned ${tools.length} tools, expected ${expected}`)
    withParse?.push(done - t0)
    return { latencyMs: conn.lastReceivedAt ? conn.lastReceivedAt() - t0 : done - t0 }
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
  const t = { ctx, stateDir: ctx.dir('tutti-list-state') }
  /** @type {ListSection} */
  const out = {
    connectors: cfg.listConnectors,
    toolsPerConnector: cfg.listTools,
    eras: [],
    setup: {},
    stateDir: t.stateDir,
  }
  /** @type {{ row: ListEra, conn: RawConnection, samples: number[], withParse: number[] }[]} */
  const conns = []
  try {
    const made = generateConnectors({
      outDir: ctx.dir('list-connectors'),
      count: cfg.listConnectors,
      tools: cfg.listTools,
    })
    progress(`${label}: installing ${made.length} connectors (${cfg.installConcurrency} at a time)`)
    const t0 = performance.now()
    let done = 0
    await pool(made, cfg.installConcurrency, async ({ dir }) => {
      await tutti(t, ['connector', 'install', dir])
      if (++done % 25 === 0) progress(`${label}: ${done}/${made.length} installed`)
    })
    out.setup.installMs = performance.now() - t0
    const { url, headers } = await prepareSession(t, 'bench-list')
    const spec = { transport: /** @type {const} */ ('streamable-http'), url, headers }
    for (const era of [LEGACY, MODERN]) {
      /** @type {ListEra} */
      const row = { era, rounds: [] }
      out.eras.push(row)
      try {
        const conn = await withTimeout(`${label} ${era} connect`, cfg.startBudgetMs, () =>
          connectRaw(spec, era, cfg.requestTimeoutMs),
        )
        row.negotiated = conn.negotiated
        conns.push({ row, conn, samples: [], withParse: [] })
      } catch (err) {
        row.error = message(err)
      }
    }
    if (!conns.length) return out
    // every upstream must be up and listed before timing starts
    const first = conns[0].conn
    await pollUntil(
      `${label}: all ${total} tools listed`,
      300_000,
      async () => (await rawListTools(first)).length === total,
      { intervalMs: 500 },
    )
    out.setup.readyMs = performance.now() - t0
    const tools = await rawListTools(first)
    const want = `${connectorKey(0)}_tool-00`
    if (!tools.some((x) => x.name === want)) throw new Error(`tool ${want} not listed (first: ${tools[0]?.name})`)
    for (const c of conns) {
      await rawListTools(c.conn)
      c.row.bytes = c.conn.lastBytes?.()
    }
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
    for (let r = 0; r < cfg.rounds; r++) {
      const turn = r % 2 ? [...conns].reverse() : conns
      for (const c of turn) {
        if (c.row.error) continue
        try {
          const stats = await sequentialLatency(listCall(c.conn, total, c.withParse), {
            warmup: 0,
            count: cfg.listCalls,
            budgetMs: cfg.measureBudgetMs,
            what: 'tools/list',
            samples: c.samples,
          })
          c.row.rounds.push(stats.median)
          progress(`  r${r + 1} tools/list ${c.row.era}: median ${stats.median.toFixed(2)} ms`)
        } catch (err) {
          c.row.error = `round ${r + 1}: ${message(err)}`
        }
      }
    }
    for (const c of conns) {
      c.row.median = medianOf(c.row.rounds)
      c.row.withParseMedian = medianOf(c.withParse)
      const sorted = [...c.samples].sort((a, b) => a - b)
      c.row.p99 = sorted.length ? sorted[Math.min(sorted.length, Math.ceil(0.99 * sorted.length)) - 1] : NaN
    }
  } catch (err) {
    out.setup.error = message(err)
    progress(`${label}: FAILED ${out.setup.error}`)
  } finally {
    for (const c of conns) await c.conn.close().catch(() => {})
    progress(`${label}: ${await stopDaemon(t)}`)
  }
  return out
}
