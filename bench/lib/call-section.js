// Section "call": tools/call of server-everything `echo` through every
// target, interleaved. Every target is started first and stays up; then, in
// each of BENCH_ROUNDS rounds, every (target, era, client) "slot" is measured
// once (warm-up, sequential latency; then throughput with N in flight and the
// gateway's CPU, in bursts interleaved over the slots), in an order rotated by
// one each round and reversed every other round. A slow spell on the
// machine then hits every target in some round instead of one target in all
// of them, and ratios are taken between slots of the same round (ratios.js).
import { echoCall, findTool } from './clients.js'
import { connectRaw, rawEchoCall, rawFindTool } from './raw/client.js'
import { measureRound, warmUp } from './call-rounds.js'
import { pollUntil, withTimeout } from './wait.js'
import { directStdio } from './targets/direct-stdio.js'
import { floor } from './targets/floor.js'
import { tuttiBaseTarget, tuttiTarget } from './targets/tutti.js'
import { mcpProxy } from './targets/mcp-proxy.js'
import { supergateway } from './targets/supergateway.js'
import { mcpHub } from './targets/mcp-hub.js'

/**
 * Start order (and the first round's order): direct stdio, the floor, tutti, the baseline build of tutti (only with
 * BENCH_BASELINE), then the peers.
 */
export const CALL_TARGETS = [directStdio, floor, tuttiTarget, tuttiBaseTarget, mcpProxy, supergateway, mcpHub]
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
 * @property {number} [clientCpuMsPerCall]
 * @property {number} [upstreamCpuMsPerCall]  the gateway's descendants (its upstream servers)
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
 * @property {(variant: import('./targets/types.js').Variant, timeoutMs: number) => Promise<{ negotiated: string, close:
 * () => Promise<void> }>} connect
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

/**
 * A live slot: the slot, its connection, its checked echo call and its gateway's pid.
 * @typedef {{ slot: Slot, conn: { close: () => Promise<void> }, call: () => Promise<void>,
 *   gatewayPid?: () => number | undefined }} Live
 */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * Which clients measure a variant: the raw client for HTTP targets (and the SDK when asked), the SDK for stdio.
 * @param {import('./targets/types.js').Variant} variant @param {import('./config.js').BenchConfig} cfg
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
  /** @type {Live[]} */
  const live = []
  const stops = []
  try {
    for (const def of CALL_TARGETS.filter((t) => cfg.targets.includes(t.id))) {
      progress(`${def.label}: starting`)
      let started
      try {
        started = await withTimeout(`${def.label} start`, cfg.startBudgetMs * 2, () => def.start(ctx))
      } catch (err) {
        slots.push({
          key: `${def.id}::`,
          target: def.id,
          label: def.label,
          client: 'raw',
          era: '',
          error: message(err),
          rounds: [],
        })
        progress(`${def.label}: ${message(err)}`)
        continue
      }
      stops.push({ label: def.label, stop: started.stop })
      for (const variant of started.variants) {
        for (const client of clientsFor(variant, cfg)) {
          /** @type {Slot} */
          const slot = {
            key: `${def.id}:${variant.era}:${client}`,
            target: def.id,
            label: def.label,
            client,
            era: variant.era,
            transport: variant.transport,
            command: started.command,
            notes: started.notes,
            rounds: [],
          }
          slots.push(slot)
          const entry = await connectSlot(ctx, slot, variant, DRIVERS[client], progress)
          if (entry) live.push({ ...entry, gatewayPid: started.gatewayPid })
        }
      }
    }
    // every row warmed the same way before round 1, which otherwise measured the JIT of whichever row came first
    for (const l of live) await warmUp(cfg, l, progress)
    /** @type {string[][]} the order of every round, for the report */
    const order = []
    for (let r = 0; r < cfg.rounds; r++) {
      const shift = live.length ? r % live.length : 0
      const rotated = [...live.slice(shift), ...live.slice(0, shift)]
      // reversed every other round: a row that shares a gateway with the next one (tutti's two eras) would
      // otherwise always run right after it, on a warm gateway and upstream, and the other never
      const turn = r % 2 ? rotated.reverse() : rotated
      order.push(turn.map((l) => l.slot.key))
      progress(`round ${r + 1}/${cfg.rounds}: ${turn.map((l) => l.slot.key).join(' → ')}`)
      await measureRound(ctx, turn, r, progress)
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
    conn = await withTimeout(`${slot.key} connect`, cfg.startBudgetMs, () =>
      driver.connect(variant, cfg.requestTimeoutMs),
    )
    slot.negotiated = conn.negotiated
    const c = conn
    // the upstream may still be registering tools right after start: retry the lookup, bounded
    slot.tool = await pollUntil(`${slot.key} find echo tool`, 30_000, () => driver.findTool(c, variant.tool), {
      intervalMs: 250,
    })
    progress(`${slot.key}: connected (negotiated ${slot.negotiated}, tool ${slot.tool})`)
    return { slot, conn, call: driver.echo(conn, slot.tool, cfg.requestTimeoutMs) }
  } catch (err) {
    slot.error = message(err)
    progress(`${slot.key}: FAILED ${slot.error}`)
    await conn?.close().catch(() => {})
    return undefined
  }
}
