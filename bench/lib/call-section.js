// Section "call": tools/call of server-everything `echo` through every
// target, interleaved. Every target is started first and stays up; then, in
// each of BENCH_ROUNDS rounds, every (target, era, client) "slot" is measured
// once (warm-up, sequential latency, then throughput with N in flight and the
// gateway's CPU), in an order rotated by one each round. A slow spell on the
// machine then hits every target in some round instead of one target in all
// of them, and ratios are taken between slots of the same round (ratios.js).
import { echoCall, findTool } from './clients.js'
import { connectRaw, rawEchoCall, rawFindTool } from './raw/client.js'
import { processCpuMs } from './cpu.js'
import { sequentialLatency, throughput } from './measure.js'
import { pollUntil, withTimeout } from './wait.js'
import { directStdio } from './targets/direct-stdio.js'
import { floor } from './targets/floor.js'
import { tuttiTarget } from './targets/tutti.js'
import { mcpProxy } from './targets/mcp-proxy.js'
import { supergateway } from './targets/supergateway.js'
import { mcpHub } from './targets/mcp-hub.js'

/** Start order (and the first round's order): the baseline, the floor, tutti, then the peers. */
export const CALL_TARGETS = [directStdio, floor, tuttiTarget, mcpProxy, supergateway, mcpHub]
/** The gateways tutti is compared with ("best peer"). */
export const PEERS = ['mcp-proxy', 'supergateway', 'mcp-hub']

/**
 * One measurement of one slot in one round.
 * @typedef {object} RoundResult
 * @property {number} [median]     ms, sequential
 * @property {number} [p99]        ms, sequential
 * @property {number} [callsPerSec]
 * @property {number} [clientCpuPct]
 * @property {number} [gatewayCpuMsPerCall]
 * @property {string} [error]
 */

/**
 * @typedef {object} Slot
 * @property {string} key          `${target}:${era}:${client}`
 * @property {string} target
 * @property {string} label
 * @property {'sdk' | 'raw'} client
 * @property {string} era
 * @property {string} [negotiated]
 * @property {string} [transport]
 * @property {string} [tool]
 * @property {string} [command]
 * @property {string[]} [notes]
 * @property {string} [error]      why it could not be measured (start, connect or a failed round)
 * @property {RoundResult[]} rounds  index = round
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
 * Which clients measure a variant: the raw client for HTTP targets (and the SDK when asked), the SDK for stdio.
 * @returns {('sdk' | 'raw')[]}
 */
function clientsFor(variant, cfg) {
  if (!variant.raw) return ['sdk']
  return /** @type {const} */ (['raw', 'sdk']).filter((c) => cfg.clients.includes(c))
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 * @returns {Promise<{ slots: Slot[], order: string[][] }>}
 */
export async function runCallSection(ctx, progress) {
  const { cfg } = ctx
  /** @type {Slot[]} */
  const slots = []
  /** live slots: the slot, its connection, its checked echo call and its gateway's pid */
  const live = []
  const stops = []
  try {
    for (const def of CALL_TARGETS.filter((t) => cfg.targets.includes(t.id))) {
      progress(`${def.label}: starting`)
      let started
      try {
        started = await withTimeout(`${def.label} start`, cfg.startBudgetMs * 2, () => def.start(ctx))
      } catch (err) {
        slots.push({ key: `${def.id}::`, target: def.id, label: def.label, client: 'raw', era: '', error: message(err), rounds: [] })
        progress(`${def.label}: ${message(err)}`)
        continue
      }
      stops.push({ label: def.label, stop: started.stop })
      for (const variant of started.variants) {
        for (const client of clientsFor(variant, cfg)) {
          /** @type {Slot} */
          const slot = { key: `${def.id}:${variant.era}:${client}`, target: def.id, label: def.label, client, era: variant.era, transport: variant.transport, command: started.command, notes: started.notes, rounds: [] }
          slots.push(slot)
          const entry = await connectSlot(ctx, slot, variant, DRIVERS[client], progress)
          if (entry) live.push({ ...entry, gatewayPid: started.gatewayPid })
        }
      }
    }
    /** @type {string[][]} the order of every round, for the report */
    const order = []
    for (let r = 0; r < cfg.rounds; r++) {
      const shift = live.length ? r % live.length : 0
      const turn = [...live.slice(shift), ...live.slice(0, shift)]
      order.push(turn.map((l) => l.slot.key))
      progress(`round ${r + 1}/${cfg.rounds}: ${turn.map((l) => l.slot.key).join(' → ')}`)
      for (const l of turn) l.slot.rounds[r] = await measureRound(ctx, l, r, progress)
    }
    return { slots, order }
  } finally {
    for (const l of live) await l.conn.close().catch(() => {})
    for (const s of stops) {
      try {
        const how = await s.stop()
        if (how) progress(`${s.label}: stopped (${how})`)
      } catch (err) {
        progress(`${s.label}: stop failed: ${message(err)}`)
      }
    }
  }
}

/**
 * Connect, find the echo tool and build the checked call; on failure the slot records why.
 * @param {import('./context.js').RunContext} ctx
 * @param {Slot} slot
 * @param {import('./targets/types.js').Variant} variant
 * @param {ClientDriver} driver
 * @param {(line: string) => void} progress
 */
async function connectSlot(ctx, slot, variant, driver, progress) {
  const { cfg } = ctx
  let conn
  try {
    conn = await withTimeout(`${slot.key} connect`, cfg.startBudgetMs, () => driver.connect(variant, cfg.requestTimeoutMs))
    slot.negotiated = conn.negotiated
    const c = conn
    // the upstream may still be registering tools right after start: retry the lookup, bounded
    slot.tool = await pollUntil(`${slot.key} find echo tool`, 30_000, () => driver.findTool(c, variant.tool), { intervalMs: 250 })
    progress(`${slot.key}: connected (negotiated ${slot.negotiated}, tool ${slot.tool})`)
    return { slot, conn, call: driver.echo(conn, slot.tool, cfg.requestTimeoutMs) }
  } catch (err) {
    slot.error = message(err)
    progress(`${slot.key}: FAILED ${slot.error}`)
    await conn?.close().catch(() => {})
    return undefined
  }
}

/**
 * One round of one slot. A slot that failed once is not measured again (its connection is suspect).
 * @returns {Promise<RoundResult>}
 */
async function measureRound(ctx, l, round, progress) {
  const { cfg } = ctx
  const { slot, call } = l
  if (slot.error) return { error: 'skipped after an earlier failure' }
  try {
    const latency = await sequentialLatency(call, { warmup: cfg.warmup, count: cfg.calls, budgetMs: cfg.measureBudgetMs, what: 'sequential' })
    const pid = l.gatewayPid?.()
    const cpu0 = pid === undefined ? undefined : processCpuMs(pid)
    const tp = await throughput(call, { total: cfg.concurrentCalls, concurrency: cfg.concurrency, budgetMs: cfg.measureBudgetMs, what: 'concurrent' })
    const cpu1 = pid === undefined ? undefined : processCpuMs(pid)
    /** @type {RoundResult} */
    const res = { median: latency.median, p99: latency.p99, callsPerSec: tp.callsPerSec, clientCpuPct: tp.clientCpuPct }
    if (cpu0 !== undefined && cpu1 !== undefined) res.gatewayCpuMsPerCall = (cpu1 - cpu0) / cfg.concurrentCalls
    const cpu = res.gatewayCpuMsPerCall === undefined ? '' : `, ${res.gatewayCpuMsPerCall.toFixed(3)} ms CPU/call`
    progress(`  r${round + 1} ${slot.key}: median ${latency.median.toFixed(3)} ms, ${tp.callsPerSec.toFixed(0)} calls/s${cpu}`)
    return res
  } catch (err) {
    slot.error = `round ${round + 1}: ${message(err)}`
    progress(`  r${round + 1} ${slot.key}: FAILED ${slot.error}`)
    return { error: slot.error }
  }
}
