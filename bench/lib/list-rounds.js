// The rounds of section list: a checked whole-list call, the order of the
// rows in each round, and one round of every row. Without a baseline build a
// row takes its calls in a block, as it always has; with one (BENCH_BASELINE)
// the rows take them call by call in turn, so that a call of this build and
// one of the baseline are a few ms apart and a slow spell of the shared
// machine falls on both of them, not on one row's block.
import { performance } from 'node:perf_hooks'
import { processCpuMs } from './cpu.js'
import { median } from './measure.js'
import { rawListTools } from './raw/client.js'

/** @typedef {import('./raw/streamable.js').RawConnection} RawConnection */
/**
 * A row: one daemon in one era, its samples over every round, the times with the client's JSON.parse, and the
 * daemon's pid (for its CPU time per list, read when the rows are taken call by call).
 * @typedef {{ row: import('./list-section.js').ListEra, conn: RawConnection, samples: number[], withParse: number[],
 *   pid?: number }} Conn
 */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * One checked tools/list (every page, the expected count). Its latency is to the last byte of the answer; the raw
 * client's JSON.parse of 2 MiB (≈4-9 ms on these machines) is the client's cost, kept apart in `withParse` for the
 * notes.
 * @param {RawConnection} conn @param {number} expected @param {number[]} [withParse]
 * @returns {() => Promise<{ latencyMs: number }>}
 */
export function listCall(conn, expected, withParse) {
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
 * Rows in the order of round `r`: with two (the eras of one daemon) they alternate which goes first; with more
 * (two daemons), the order is also rotated by one per round, so each row follows each other one in some round.
 * @template T @param {T[]} rows @param {number} r
 */
export function roundOrder(rows, r) {
  if (rows.length <= 2) return r % 2 ? [...rows].reverse() : rows
  const shift = r % rows.length
  const rotated = [...rows.slice(shift), ...rows.slice(0, shift)]
  return r % 2 ? rotated.reverse() : rotated
}

/**
 * `cfg.listCalls` timed calls of every row that has not failed, in blocks or call by call (the order reversed
 * every other turn). A row whose call fails gets its error and leaves the round. Resolves, for each row that
 * completed it, the median ms and, call by call, the daemon's mean CPU ms per list: its CPU time from before each
 * call is sent to after its answer is parsed (the other daemon is idle then; on a loaded machine this is the figure
 * the load moves least).
 * @param {import('./config.js').BenchConfig} cfg @param {Conn[]} turn
 * @param {{ total: number, round: number, callByCall: boolean }} o
 * @returns {Promise<Map<Conn, { median: number, cpuMs?: number }>>}
 */
export async function listRound(cfg, turn, { total, round, callByCall }) {
  const deadline = performance.now() + cfg.measureBudgetMs
  /** @type {Map<Conn, number[]>} */
  const samples = new Map(turn.filter((c) => !c.row.error).map((c) => [c, []]))
  /** @type {Map<Conn, number>} CPU ms over the round's calls; NaN once a read failed */
  const cpu = new Map()
  /** @param {Conn} c */
  const one = async (c) => {
    const mine = samples.get(c)
    if (!mine) return
    try {
      if (performance.now() > deadline) throw new Error(`time budget exhausted after ${mine.length} calls`)
      const cpu0 = callByCall && c.pid !== undefined ? processCpuMs(c.pid) : undefined
      const { latencyMs } = await listCall(c.conn, total, c.withParse)()
      const cpu1 = cpu0 === undefined || c.pid === undefined ? undefined : processCpuMs(c.pid)
      if (cpu0 !== undefined) cpu.set(c, (cpu.get(c) ?? 0) + (cpu1 === undefined ? NaN : cpu1 - cpu0))
      mine.push(latencyMs)
      c.samples.push(latencyMs)
    } catch (err) {
      c.row.error = `round ${round + 1}: tools/list call #${mine.length}: ${message(err)}`
      samples.delete(c)
    }
  }
  if (callByCall)
    for (let i = 0; i < cfg.listCalls; i++) for (const c of i % 2 ? [...turn].reverse() : turn) await one(c)
  else for (const c of turn) for (let i = 0; i < cfg.listCalls; i++) await one(c)
  return new Map(
    [...samples].map(([c, s]) => {
      const cpuMs = cpu.has(c) ? /** @type {number} */ (cpu.get(c)) / s.length : undefined
      return [c, { median: median(Float64Array.from(s).sort()), ...(cpuMs === undefined ? {} : { cpuMs }) }]
    }),
  )
}
