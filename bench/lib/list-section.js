// Section 2: tools/list latency through tutti with 100 connectors × 50 tools
// (5000 tools), against the same tools/list on one fixture server of 50
// tools over stdio (the baseline).
import { performance } from 'node:perf_hooks'
import { connectStdio, LEGACY, listCall } from './clients.js'
import { sequentialLatency } from './measure.js'
import { RUN_MARKER } from './procs.js'
import { stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil, withTimeout } from './wait.js'
import { prepareSession, tuttiVariants } from './targets/tutti.js'
import { FIXTURE, connectorKey, generateConnectors } from '../fixtures/generate-connectors.js'

/**
 * @typedef {object} ListRow
 * @property {string} target
 * @property {string} label
 * @property {string} [era]
 * @property {string} [negotiated]
 * @property {number} [tools]
 * @property {import('./measure.js').LatencyStats} [latency]
 * @property {string} [error]
 */

/**
 * @typedef {object} ListSection
 * @property {number} connectors
 * @property {number} toolsPerConnector
 * @property {ListRow[]} rows
 * @property {{ installMs?: number, readyMs?: number, error?: string }} setup
 */

const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * Run `fn` over `items`, at most `limit` at a time; stops taking new items after a
 * failure and rejects with it once the running ones have settled.
 * @template T
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T) => Promise<unknown>} fn
 */
async function pool(items, limit, fn) {
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
 * @param {import('./context.js').RunContext} ctx
 * @param {ListRow} row
 * @param {import('./clients.js').Connected} conn
 * @param {number} expected
 */
async function measureList(ctx, row, conn, expected) {
  const { cfg } = ctx
  row.negotiated = conn.negotiated
  row.tools = expected
  row.latency = await sequentialLatency(listCall(conn.client, expected, cfg.requestTimeoutMs), {
    warmup: cfg.listWarmup,
    count: cfg.listCalls,
    budgetMs: cfg.measureBudgetMs,
    what: 'tools/list',
  })
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 * @returns {Promise<ListSection>}
 */
export async function runListSection(ctx, progress) {
  const { cfg } = ctx
  const perServer = cfg.listTools
  const total = cfg.listConnectors * perServer
  /** @type {ListSection} */
  const out = { connectors: cfg.listConnectors, toolsPerConnector: perServer, rows: [], setup: {} }

  // baseline: one fixture server, directly over stdio
  /** @type {ListRow} */
  const base = { target: 'direct', label: `(a) direct stdio, 1 server × ${perServer} tools`, era: LEGACY }
  out.rows.push(base)
  progress(`${base.label}: ${cfg.listCalls} tools/list`)
  let conn
  try {
    const args = perServer === 50 ? [FIXTURE] : [FIXTURE, '--tools', String(perServer)]
    conn = await withTimeout('fixture connect', cfg.startBudgetMs, () => connectStdio({ command: process.execPath, args, env: { [RUN_MARKER]: ctx.runId }, cwd: ctx.dir('list-direct') }))
    await measureList(ctx, base, conn, perServer)
  } catch (err) {
    base.error = message(err)
  } finally {
    await conn?.close()
  }

  if (!cfg.targets.includes('tutti')) return out

  // tutti with N generated connectors
  const t = { ctx, stateDir: ctx.dir('tutti-list-state') }
  const label = `(b) tutti, ${cfg.listConnectors} connectors × ${perServer} tools`
  try {
    const made = generateConnectors({ outDir: ctx.dir('list-connectors'), count: cfg.listConnectors, tools: perServer })
    progress(`${label}: installing ${made.length} connectors (${cfg.installConcurrency} at a time)`)
    const t0 = performance.now()
    let done = 0
    await pool(made, cfg.installConcurrency, async ({ dir }) => {
      await tutti(t, ['connector', 'install', dir])
      if (++done % 25 === 0) progress(`${label}: ${done}/${made.length} installed`)
    })
    out.setup.installMs = performance.now() - t0
    const { url, headers } = await prepareSession(t, 'bench-list')
    const variants = tuttiVariants(url, headers, `${connectorKey(0)}_tool-00`)
    for (const variant of variants) {
      /** @type {ListRow} */
      const row = { target: 'tutti', label, era: variant.era }
      out.rows.push(row)
      let c
      try {
        c = await withTimeout(`${label} connect`, cfg.startBudgetMs, variant.connect)
        const client = c.client
        if (out.setup.readyMs === undefined) {
          // every upstream must be up and listed before timing starts
          await pollUntil(`${label}: all ${total} tools listed`, 300_000, async () => (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.length === total, { intervalMs: 500 })
          out.setup.readyMs = performance.now() - t0
        }
        const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' })
        const want = `${connectorKey(0)}_tool-00`
        if (!tools.some((x) => x.name === want)) throw new Error(`tool ${want} not listed (first: ${tools[0]?.name})`)
        progress(`${label} ${variant.era}: ${cfg.listCalls} tools/list of ${tools.length} tools`)
        await measureList(ctx, row, c, total)
      } catch (err) {
        row.error = message(err)
        progress(`${label} ${variant.era}: FAILED ${row.error}`)
      } finally {
        await c?.close()
      }
    }
  } catch (err) {
    out.setup.error = `not available yet (${message(err)})`
    out.rows.push({ target: 'tutti', label, error: out.setup.error })
    progress(`${label}: ${out.setup.error}`)
  } finally {
    progress(`${label}: ${await stopDaemon(t)}`)
  }
  return out
}
