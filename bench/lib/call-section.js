// Section 1: tools/call (server-everything `echo`) through every target:
// sequential latency, then throughput with N calls in flight, on one
// connection per (target, era, client). Each variant is measured with the SDK
// client and, for HTTP targets, again with the raw node:http client (a row
// each). Targets run one after another; a target that fails to start or to
// answer gets a row with the reason, and the run goes on.
import { echoCall, findTool } from './clients.js'
import { connectRaw, rawEchoCall, rawFindTool } from './raw/client.js'
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
 * @property {'sdk' | 'raw'} [client]     SDK v2 client or the raw node:http client (absent when the target failed to start)
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

/**
 * What a client mode needs to measure one variant.
 * @typedef {object} ClientDriver
 * @property {(variant: import('./targets/types.js').Variant, timeoutMs: number) => Promise<{ negotiated: string, close: () => Promise<void> }>} connect
 * @property {(conn: any, tool: string | RegExp) => Promise<string>} findTool
 * @property {(conn: any, tool: string, timeoutMs: number) => () => Promise<void>} echo
 */

/** @type {Record<'sdk' | 'raw', ClientDriver>} */
const DRIVERS = {
  sdk: {
    connect: (variant) => variant.connect(),
    findTool: (conn, tool) => findTool(conn.client, tool),
    echo: (conn, tool, timeoutMs) => echoCall(conn.client, tool, timeoutMs),
  },
  raw: {
    connect: (variant, timeoutMs) => {
      if (!variant.raw) throw new Error('no raw client for this target')
      return connectRaw(variant.raw, variant.era, timeoutMs)
    },
    findTool: (conn, tool) => rawFindTool(conn, tool),
    echo: (conn, tool) => rawEchoCall(conn, tool),
  },
}

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
        for (const client of /** @type {const} */ (['sdk', 'raw'])) {
          if (!cfg.clients.includes(client) || (client === 'raw' && !variant.raw)) continue
          /** @type {CallRow} */
          const row = { target: def.id, label: def.label, client, era: variant.era, transport: variant.transport, command: started.command, notes: started.notes, listens: started.listens }
          rows.push(row)
          await measureVariant(ctx, variant, DRIVERS[client], row, progress, started.gatewayPid)
        }
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
 * @param {ClientDriver} driver
 * @param {CallRow} row
 * @param {(line: string) => void} progress
 * @param {(() => number | undefined) | undefined} gatewayPid
 */
async function measureVariant(ctx, variant, driver, row, progress, gatewayPid) {
  const { cfg } = ctx
  const tag = `${row.label} ${variant.era}${row.client === 'raw' ? ' [raw client]' : ''}`
  /** @type {{ negotiated: string, close: () => Promise<void> } | undefined} */
  let conn
  try {
    conn = await withTimeout(`${tag} connect`, cfg.startBudgetMs, () => driver.connect(variant, cfg.requestTimeoutMs))
    row.negotiated = conn.negotiated
    const c = conn
    // the upstream may still be registering tools right after start: retry the lookup, bounded
    row.tool = await pollUntil(`${tag} find echo tool`, 30_000, () => driver.findTool(c, variant.tool), { intervalMs: 250 })
    const call = driver.echo(c, row.tool, cfg.requestTimeoutMs)
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
