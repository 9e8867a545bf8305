// The rounds of section call: the warm-up burst of every row, and one round
// of every live row (its sequential latency, then its throughput in bursts
// interleaved over the rows). With a baseline build among the rows
// (BENCH_BASELINE) the sequential calls, too, are taken call by call over the
// rows: a 200-call block of one row is ~100 ms, and on the shared 2-core
// machine a slow spell that long fell on one build's block and not the
// other's.
import { processCpuMs } from './cpu.js'
import { descendants } from './proc-tree.js'
import { interleavedLatency, sequentialLatency, throughput } from './measure.js'

/** @typedef {import('./call-section.js').Live} Live */
/** @typedef {import('./call-section.js').RoundResult} RoundResult */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/** @param {(number | undefined)[]} xs @returns {xs is number[]} */
const known = (xs) => xs.every((x) => x !== undefined)

/**
 * One untimed throughput run of a slot; a failure fails the slot, as a round would.
 * @param {import('./config.js').BenchConfig} cfg @param {Live} l @param {(line: string) => void} progress
 */
export async function warmUp(cfg, l, progress) {
  if (cfg.warmupBurst === 0) return
  try {
    const tp = await throughput(l.call, {
      total: cfg.warmupBurst,
      concurrency: cfg.concurrency,
      budgetMs: cfg.measureBudgetMs,
      what: 'warm-up burst',
    })
    progress(`  warm-up ${l.slot.key}: ${tp.callsPerSec.toFixed(0)} calls/s (not counted)`)
  } catch (err) {
    l.slot.error = `warm-up: ${message(err)}`
    progress(`  warm-up ${l.slot.key}: FAILED ${l.slot.error}`)
  }
}

/**
 * One round of every live slot: each one's sequential latency in turn, then
 * the throughput run of each split into `cfg.bursts` bursts, interleaved
 * slot by slot (the order reversed every other burst). A slow spell of the
 * machine inside a round then falls on every slot's bursts alike, which is
 * what a ratio between two slots of the round needs: calls/s is a slot's
 * calls over the time of its own bursts. With a baseline row, the
 * sequential calls of every slot are taken call by call, after every slot's
 * round warm-up.
 * @param {import('./context.js').RunContext} ctx @param {Live[]} turn @param {number} round
 * @param {(line: string) => void} progress
 * @returns {Promise<void>}
 */
export async function measureRound(ctx, turn, round, progress) {
  const { cfg } = ctx
  /**
   * @type {Map<object, { latency?: import('./measure.js').LatencyStats, calls: number, elapsedMs: number, clientCpuMs:
   * number, gatewayCpuMs?: number, upstreamCpuMs?: number }>}
   */
  const parts = new Map()
  const seq = { warmup: cfg.warmup, count: cfg.calls, budgetMs: cfg.measureBudgetMs, what: 'sequential' }
  const byCall = turn.some((l) => l.slot.target === 'tutti-base')
  for (const l of turn) {
    const part = await attemptSlot(l, round, progress, async () => {
      if (cfg.roundWarmup > 0)
        await throughput(l.call, {
          total: cfg.roundWarmup,
          concurrency: cfg.concurrency,
          budgetMs: cfg.measureBudgetMs,
          what: 'round warm-up',
        })
      const latency = byCall ? undefined : await sequentialLatency(l.call, seq)
      const gateway = l.gatewayPid?.() === undefined ? undefined : 0
      return { latency, calls: 0, elapsedMs: 0, clientCpuMs: 0, gatewayCpuMs: gateway, upstreamCpuMs: gateway }
    })
    if (part) parts.set(l, part)
  }
  if (byCall) {
    const rows = turn.filter((l) => parts.has(l))
    const stats = await interleavedLatency(
      rows.map((l) => l.call),
      seq,
    )
    for (const [i, l] of rows.entries()) {
      const s = stats[i]
      const part = parts.get(l)
      if (part && !(s instanceof Error)) part.latency = s
      else {
        fail(l, round, progress, s)
        parts.delete(l)
      }
    }
  }
  const burst = Math.max(1, Math.ceil(cfg.concurrentCalls / cfg.bursts))
  for (let b = 0; b < cfg.bursts; b++) {
    for (const l of b % 2 ? [...turn].reverse() : turn) {
      const part = parts.get(l)
      if (!part || l.slot.error) continue
      const ok = await attemptSlot(l, round, progress, async () => {
        const pid = l.gatewayPid?.()
        const below = pid === undefined ? [] : descendants(pid)
        const up0 = below.map(processCpuMs)
        const cpu0 = pid === undefined ? undefined : processCpuMs(pid)
        const tp = await throughput(l.call, {
          total: burst,
          concurrency: cfg.concurrency,
          budgetMs: cfg.measureBudgetMs,
          what: 'concurrent',
        })
        const cpu1 = pid === undefined ? undefined : processCpuMs(pid)
        const up1 = below.map(processCpuMs)
        part.calls += burst
        part.elapsedMs += tp.elapsedMs
        part.clientCpuMs += (tp.clientCpuPct * tp.elapsedMs) / 100
        if (part.gatewayCpuMs !== undefined)
          part.gatewayCpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : part.gatewayCpuMs + cpu1 - cpu0
        // an upstream that ended or started during the burst leaves its share unknown
        const upstream =
          below.length && known(up0) && known(up1) ? up1.reduce((a, c, i) => a + c - up0[i], 0) : undefined
        if (part.upstreamCpuMs !== undefined)
          part.upstreamCpuMs = upstream === undefined ? undefined : part.upstreamCpuMs + upstream
        return true
      })
      if (!ok) parts.delete(l)
    }
  }
  for (const l of turn) {
    const part = parts.get(l)
    if (!part?.latency) {
      l.slot.rounds[round] = { error: l.slot.error ?? 'skipped after an earlier failure' }
      continue
    }
    const callsPerSec = (part.calls / part.elapsedMs) * 1000
    const clientCpuPct = (part.clientCpuMs / part.elapsedMs) * 100
    /** @type {RoundResult} */
    const res = { median: part.latency.median, p99: part.latency.p99, callsPerSec, clientCpuPct }
    if (part.gatewayCpuMs !== undefined) res.gatewayCpuMsPerCall = part.gatewayCpuMs / part.calls
    if (part.upstreamCpuMs !== undefined) res.upstreamCpuMsPerCall = part.upstreamCpuMs / part.calls
    res.clientCpuMsPerCall = part.clientCpuMs / part.calls
    const cpu = res.gatewayCpuMsPerCall === undefined ? '' : `, ${res.gatewayCpuMsPerCall.toFixed(3)} ms CPU/call`
    const median = part.latency.median.toFixed(3)
    progress(`  r${round + 1} ${l.slot.key}: median ${median} ms, ${callsPerSec.toFixed(0)} calls/s${cpu}`)
    l.slot.rounds[round] = res
  }
}

/**
 * Run one measurement of a slot; a slot that failed once is not measured again (its connection is suspect).
 * @template T
 * @param {Live} l @param {number} round @param {(line: string) => void} progress @param {() => Promise<T>} run
 * @returns {Promise<T | undefined>}
 */
async function attemptSlot(l, round, progress, run) {
  if (l.slot.error) return undefined
  try {
    return await run()
  } catch (err) {
    fail(l, round, progress, err)
    return undefined
  }
}

/**
 * A slot fails: it says why, and it is not measured again.
 * @param {Live} l @param {number} round @param {(line: string) => void} progress @param {unknown} err
 */
function fail(l, round, progress, err) {
  l.slot.error = `round ${round + 1}: ${message(err)}`
  progress(`  r${round + 1} ${l.slot.key}: FAILED ${l.slot.error}`)
}
