// Section 1: tools/call (server-everything `echo`) through every target:
// sequential latency, then throughput with N calls in flight, on one
// connection per (target, era). Targets run one after another; a target that
// fails to start or to answer gets a row with the reason, and the run goes on.
import { echoCall, findTool } from './clients.js'
import { processCpuMs } from './cpu.js'
import { sequentialLatency, throughput } from './measure.js'
import { pollUntil, withTimeout } from './wait.js'
import { directStdio } from './targets/direct-stdio.js'
import { tuttiTarget } from './targets/tutti.js'
import { mcpProxy } from './targets/mcp-proxy.js'
import { supergateway } from './targets/supergateway.js'
import { mcpHub } from './targets/mcp-hub.js'

/** Measurement order: the baseline first, then tutti, then the peers. */
export const CALL_TARGETS = [directStdio, tuttiTarget, mcpProxy, supergateway, mcpHub]

/**
 * @typedef {object} CallRow
 * @property {string} target
 * @property {string} label
 * @property {string} [era]
 * @property {string} [negotiated]
 * @property {string} [transport]
 * @property {string} [tool]
 * @property {string} [command]
 * @property {string[]} [notes]
 * @property {string[]} [listens]
 * @property {import('./measure.js').LatencyStats} [latency]
 * @property {import('./measure.js').ThroughputResult} [throughput]
 * @property {number} [gatewayCpuMsPerCall]  CPU of the gateway process per call during the throughput run
 * @property {string} [error]
 */

const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 * @returns {Promise<CallRow[]>}
 */
export async function runCallSection(ctx, progress) {
  const { cfg } = ctx
  /** @type {CallRow[]} */
  const rows = []
  for (const def of CALL_TARGETS.filter((t) => cfg.targets.includes(t.id))) {
    progress(`${def.label}: starting`)
    let started
    try {
      started = await withTimeout(`${def.label} start`, cfg.startBudgetMs * 2, () => def.start(ctx))
    } catch (err) {
      rows.push({ target: def.id, label: def.label, error: message(err) })
      progress(`${def.label}: ${message(err)}`)
      continue
    }
    try {
      for (const variant of started.variants) {
        /** @type {CallRow} */
        const row = { target: def.id, label: def.label, era: variant.era, transport: variant.transport, command: started.command, notes: started.notes, listens: started.listens }
        rows.push(row)
        await measureVariant(ctx, variant, row, progress, started.gatewayPid)
      }
    } finally {
      try {
        const how = await started.stop()
        if (how) progress(`${def.label}: stopped (${how})`)
      } catch (err) {
        progress(`${def.label}: stop failed: ${message(err)}`)
      }
    }
  }
  return rows
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {import('./targets/types.js').Variant} variant
 * @param {CallRow} row
 * @param {(line: string) => void} progress
 * @param {(() => number | undefined) | undefined} gatewayPid
 */
async function measureVariant(ctx, variant, row, progress, gatewayPid) {
  const { cfg } = ctx
  const tag = `${row.label} ${variant.era}`
  /** @type {import('./clients.js').Connected | undefined} */
  let conn
  try {
    conn = await withTimeout(`${tag} connect`, cfg.startBudgetMs, variant.connect)
    row.negotiated = conn.negotiated
    const client = conn.client
    // the upstream may still be registering tools right after start: retry the lookup, bounded
    row.tool = await pollUntil(`${tag} find echo tool`, 30_000, () => findTool(client, variant.tool), { intervalMs: 250 })
    const call = echoCall(client, row.tool, cfg.requestTimeoutMs)
    progress(`${tag}: ${cfg.calls} sequential calls (+${cfg.warmup} warm-up) to ${row.tool} [negotiated ${row.negotiated}]`)
    row.latency = await sequentialLatency(call, { warmup: cfg.warmup, count: cfg.calls, budgetMs: cfg.measureBudgetMs, what: 'sequential' })
    progress(`${tag}: ${cfg.concurrentCalls} calls, ${cfg.concurrency} in flight`)
    const pid = gatewayPid?.()
    const cpu0 = pid === undefined ? undefined : processCpuMs(pid)
    row.throughput = await throughput(call, { total: cfg.concurrentCalls, concurrency: cfg.concurrency, budgetMs: cfg.measureBudgetMs, what: 'concurrent' })
    const cpu1 = pid === undefined ? undefined : processCpuMs(pid)
    if (cpu0 !== undefined && cpu1 !== undefined && cfg.concurrentCalls > 0) row.gatewayCpuMsPerCall = (cpu1 - cpu0) / cfg.concurrentCalls
    progress(`${tag}: median ${row.latency.median.toFixed(3)} ms, p99 ${row.latency.p99.toFixed(3)} ms, ${row.throughput.callsPerSec.toFixed(0)} calls/s`)
  } catch (err) {
    row.error = message(err)
    progress(`${tag}: FAILED ${row.error}`)
  } finally {
    await conn?.close()
  }
}
