// Latency statistics and the two measurement loops (sequential latency,
// fixed-count throughput with N in flight). Every loop is bounded by a count
// and by a wall-clock deadline; the first failed call aborts the measurement.
import { performance } from 'node:perf_hooks'

/**
 * @typedef {object} LatencyStats
 * @property {number} n
 * @property {number} median  ms
 * @property {number} p99     ms (nearest rank)
 * @property {number} mean    ms
 * @property {number} min     ms
 * @property {number} max     ms
 */

/**
 * Nearest-rank percentile of an ascending array.
 * @param {ArrayLike<number>} sorted
 * @param {number} p  0..100
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]
}

/** Median (mean of the two middle values for even n). @param {ArrayLike<number>} sorted */
export function median(sorted) {
  const n = sorted.length
  if (n === 0) return NaN
  const mid = n >> 1
  return n % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * @param {ArrayLike<number>} samples  ms
 * @returns {LatencyStats}
 */
export function latencyStats(samples) {
  const sorted = Float64Array.from(samples).sort()
  let sum = 0
  for (const v of sorted) sum += v
  return {
    n: sorted.length,
    median: median(sorted),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : NaN,
    min: sorted.length ? sorted[0] : NaN,
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  }
}

/** @param {number} deadline @param {string} what @param {number} done */
function checkDeadline(deadline, what, done) {
  if (performance.now() > deadline) throw new Error(`${what}: time budget exhausted after ${done} calls`)
}

/** @param {() => Promise<unknown>} call @param {string} what @param {number} index */
async function attempt(call, what, index) {
  try {
    return await call()
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err)
    throw new Error(`${what}: call #${index} failed: ${msg}`)
  }
}

/**
 * `warmup` untimed calls, then `count` timed sequential calls (each sample
 * also pushed onto `samples` when given, to pool them across rounds).
 * @param {() => Promise<unknown>} call
 * @param {{ warmup: number, count: number, budgetMs: number, what?: string, samples?: number[] }} opts
 * @returns {Promise<LatencyStats>}
 */
export async function sequentialLatency(call, { warmup, count, budgetMs, what = 'sequential', samples: pooled }) {
  const deadline = performance.now() + budgetMs
  for (let i = 0; i < warmup; i++) {
    checkDeadline(deadline, `${what} warm-up`, i)
    await attempt(call, `${what} warm-up`, i)
  }
  const samples = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    checkDeadline(deadline, what, i)
    const t0 = performance.now()
    const r = /** @type {{ latencyMs?: unknown } | null | undefined} */ (await attempt(call, what, i))
    // a call may say when its answer arrived (before the client's own decoding)
    samples[i] = r && typeof r === 'object' && typeof r.latencyMs === 'number' ? r.latencyMs : performance.now() - t0
    pooled?.push(samples[i])
  }
  return latencyStats(samples)
}

/**
 * Sequential calls of several rows, call by call in turn (the order reversed every other turn): `warmup` untimed,
 * then `count` timed calls of each row. A row whose call fails leaves the turns; its entry is then the error.
 * @param {Array<() => Promise<unknown>>} calls  one per row
 * @param {{ warmup: number, count: number, budgetMs: number, what?: string }} opts
 * @returns {Promise<Array<LatencyStats | Error>>}
 */
export async function interleavedLatency(calls, { warmup, count, budgetMs, what = 'sequential' }) {
  const deadline = performance.now() + budgetMs
  const samples = calls.map(() => new Float64Array(count))
  /** @type {Array<Error | undefined>} */
  const failed = calls.map(() => undefined)
  for (let i = 0; i < warmup + count; i++) {
    const order = calls.map((_, r) => r)
    if (i % 2) order.reverse()
    for (const r of order) {
      if (failed[r]) continue
      const step = i < warmup ? `${what} warm-up` : what
      try {
        checkDeadline(deadline, step, i)
        const t0 = performance.now()
        const res = /** @type {{ latencyMs?: unknown } | null | undefined} */ (await attempt(calls[r], step, i))
        const ms = res && typeof res === 'object' && typeof res.latencyMs === 'number' ? res.latencyMs : undefined
        if (i >= warmup) samples[r][i - warmup] = ms ?? performance.now() - t0
      } catch (err) {
        failed[r] = err instanceof Error ? err : new Error(String(err))
      }
    }
  }
  return calls.map((_, r) => failed[r] ?? latencyStats(samples[r]))
}

/**
 * @typedef {object} ThroughputResult
 * @property {number} total
 * @property {number} concurrency
 * @property {number} elapsedMs
 * @property {number} callsPerSec
 * @property {number} clientCpuPct  CPU used by this (client) process during the run, % of one core
 */

/**
 * `total` calls with `concurrency` workers, each starting its next call as
 * soon as its previous one settles.
 * @param {() => Promise<unknown>} call
 * @param {{ total: number, concurrency: number, budgetMs: number, what?: string }} opts
 * @returns {Promise<ThroughputResult>}
 */
export async function throughput(call, { total, concurrency, budgetMs, what = 'concurrent' }) {
  const deadline = performance.now() + budgetMs
  let issued = 0
  let failed = false
  const worker = async () => {
    while (!failed && issued < total) {
      const index = issued++
      checkDeadline(deadline, what, index)
      try {
        await attempt(call, what, index)
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const results = await Promise.allSettled(Array.from({ length: Math.min(concurrency, total) }, worker))
  const elapsedMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const rejected = results.find((r) => r.status === 'rejected')
  if (rejected && rejected.status === 'rejected') throw rejected.reason
  return {
    total,
    concurrency,
    elapsedMs,
    callsPerSec: (total / elapsedMs) * 1000,
    clientCpuPct: ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100,
  }
}
