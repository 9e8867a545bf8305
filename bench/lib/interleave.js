// Measuring several rows against the same server so that a slow spell of a
// shared machine hits them alike: sequential calls taken call by call in
// turn, and throughput runs split into bursts taken in turn (the order
// reversed every other turn).
import { performance } from 'node:perf_hooks'
import { median, throughput } from './measure.js'

/**
 * `warmup` untimed then `count` timed calls per row, one call of each row per turn. A call may return
 * `{ latencyMs }` (when its answer arrived, before the client's own decoding). Resolves each row's median ms.
 * @param {Array<() => Promise<unknown>>} calls  one per row
 * @param {{ warmup: number, count: number, budgetMs: number }} o
 */
export async function interleavedMedians(calls, { warmup, count, budgetMs }) {
  const deadline = performance.now() + budgetMs
  const samples = calls.map(() => /** @type {number[]} */ ([]))
  for (let i = 0; i < warmup + count; i++) {
    if (performance.now() > deadline) throw new Error(`sequential calls: time budget exhausted after ${i} turns`)
    const order = calls.map((_, r) => r)
    if (i % 2) order.reverse()
    for (const r of order) {
      const t0 = performance.now()
      const res = /** @type {{ latencyMs?: unknown } | undefined} */ (await calls[r]())
      const ms = res && typeof res.latencyMs === 'number' ? res.latencyMs : performance.now() - t0
      if (i >= warmup) samples[r].push(ms)
    }
  }
  return samples.map((s) => median(Float64Array.from(s).sort()))
}

/**
 * `total` calls per row with `concurrency` in flight, in `parts` bursts per row taken in turn. Resolves each
 * row's calls/s (its calls over the time of its own bursts) and the CPU ms per call of `cpuMs()` (a process's
 * CPU time so far; NaN when it cannot be read).
 * @param {Array<() => Promise<unknown>>} calls  one per row
 * @param {{ total: number, parts: number, concurrency: number, budgetMs: number, cpuMs: () => number | undefined }} o
 */
export async function interleavedBursts(calls, { total, parts, concurrency, budgetMs, cpuMs }) {
  const rows = calls.map(() => ({ calls: 0, elapsedMs: 0, cpuMs: 0 }))
  const per = Math.max(1, Math.floor(total / parts))
  for (let p = 0; p < parts; p++) {
    const order = calls.map((_, r) => r)
    if (p % 2) order.reverse()
    for (const r of order) {
      const c0 = cpuMs()
      const res = await throughput(calls[r], { total: per, concurrency, budgetMs })
      const c1 = cpuMs()
      rows[r].calls += per
      rows[r].elapsedMs += res.elapsedMs
      rows[r].cpuMs += c0 === undefined || c1 === undefined ? NaN : c1 - c0
    }
  }
  return rows.map((r) => ({ perSec: (r.calls / r.elapsedMs) * 1000, cpuPerCall: r.cpuMs / r.calls }))
}
