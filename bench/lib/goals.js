// Issue 11's goals, each turned into one row of the table: what is measured,
// the figure of this run, the goal and whether it is met. `met` is 'yes',
// 'no', or 'n/a' when the figure could not be measured (the reason is in the
// notes). Goals are compared with the figure as measured, not rounded.
import { LEGACY, MODERN } from './clients.js'

/**
 * @typedef {object} GoalRow
 * @property {string} measure
 * @property {number} [value]     the figure, in `unit`
 * @property {string} figure      as shown
 * @property {string} goal        as shown
 * @property {'yes' | 'no' | 'n/a' | ''} met   '' for rows without a goal
 */

/** @param {number} v */
export const x = (v) => `${v.toFixed(2)}x`
/** @param {number} v */
export const msText = (v) => (v >= 100 ? `${v.toFixed(0)} ms` : `${v.toFixed(1)} ms`)
/** @param {string} e */
const era = (e) => (e === MODERN ? '2026-07-28' : '2025-06-18')

/**
 * @param {string} measure
 * @param {number | undefined} value
 * @param {(v: number) => string} show
 * @param {string} goal
 * @param {(v: number) => boolean} holds
 * @param {string} [extra]  shown after the figure
 * @returns {GoalRow}
 */
export function row(measure, value, show, goal, holds, extra = '') {
  if (value === undefined || !Number.isFinite(value)) return { measure, figure: 'not measured', goal, met: 'n/a' }
  return { measure, value, figure: `${show(value)}${extra}`, goal, met: holds(value) ? 'yes' : 'no' }
}

/**
 * tools/call goals from the round ratios (ratios.js); with a baseline build, this build ÷ it (issue 24: within 5 %).
 * @param {ReturnType<typeof import('./ratios.js').callRatios>} ratios
 * @param {import('./baseline.js').Baseline} [baseline]
 */
export function callGoals(ratios, baseline) {
  const r = ratios.ratios
  const out = []
  for (const e of [LEGACY, MODERN])
    out.push(row(`tutti ${era(e)} CPU/call ÷ floor`, r[`cpuVsFloor ${e}`]?.median, x, '≤ 1.50x', (v) => v <= 1.5))
  for (const e of [LEGACY, MODERN]) {
    const ratio = r[`callsVsBestPeer ${e}`]?.median
    out.push(row(`tutti ${era(e)} calls/s ÷ best peer`, ratio, x, '≥ 3.00x', (v) => v >= 3))
  }
  out.push(
    row(
      'tutti 2026-07-28 ÷ 2025-06-18 calls/s',
      r['modernVsLegacy calls/s']?.median,
      x,
      '≥ 1.00x (no slower)',
      (v) => v >= 1,
    ),
  )
  if (baseline && r[`vsBaseline calls/s ${LEGACY}`])
    for (const e of [LEGACY, MODERN]) {
      const vs = `tutti ${era(e)} ÷ ${baseline.commit}`
      out.push(row(`${vs} calls/s`, r[`vsBaseline calls/s ${e}`]?.median, x, '≥ 0.95x', (v) => v >= 0.95))
      out.push(row(`${vs} median ms`, r[`vsBaseline median ms ${e}`]?.median, x, '≤ 1.05x', (v) => v <= 1.05))
      out.push(row(`${vs} CPU ms/call`, r[`vsBaseline cpu/call ${e}`]?.median, x, '≤ 1.05x', (v) => v <= 1.05))
    }
  return out
}

/**
 * tools/list goals; with a baseline build, its medians (no goal) and this build's ÷ them (issue 24: within 5 %).
 * @param {import('./list-section.js').ListSection} list
 */
export function listGoals(list) {
  const total = (list.connectors * list.toolsPerConnector).toLocaleString('en-US')
  const out = [LEGACY, MODERN].map((e) => {
    const r = list.eras.find((x) => x.era === e)
    return row(
      `tools/list of ${total} tools, ${era(e)}, median to last byte`,
      r?.median,
      msText,
      '≤ 8 ms',
      (v) => v <= 8,
    )
  })
  const base = list.baseline
  if (!base) return out
  for (const e of [LEGACY, MODERN]) {
    const median = base.eras.find((x) => x.era === e)?.median
    const shown = row(
      `baseline ${base.commit}: tools/list, ${era(e)}, median to last byte`,
      median,
      msText,
      '',
      () => true,
    )
    out.push({ ...shown, met: '' })
  }
  for (const e of [LEGACY, MODERN]) {
    const vs = `tools/list ${era(e)} ÷ ${base.commit}`
    out.push(row(`${vs}: median`, base.ratios?.[`median ${e}`]?.median, x, '≤ 1.05x', (v) => v <= 1.05))
    out.push(row(`${vs}: daemon CPU ms/list`, base.ratios?.[`cpu ${e}`]?.median, x, '≤ 1.05x', (v) => v <= 1.05))
  }
  return out
}

/** daemon start goals. @param {Awaited<ReturnType<typeof import('./start-section.js').runStartSection>>} start */
export function startGoals(start) {
  const s = start.summary ?? {}
  const n = start.connectors
  return [
    row(`daemon start, ${n} stdio connectors: ready`, s.readyMs, msText, '≤ 1000 ms', (v) => v <= 1000),
    row(
      `daemon start, ${n} stdio connectors: daemon RSS`,
      s.daemonRssMb,
      (v) => `${v.toFixed(0)} MB`,
      '≤ 150 MB',
      (v) => v <= 150,
    ),
    row(
      `daemon start, ${n} stdio connectors: upstream processes`,
      s.processes,
      (v) => v.toFixed(0),
      '0',
      (v) => v === 0,
      Number.isFinite(s.processesRssMb) && s.processes > 0 ? ` (${(s.processesRssMb / 1024).toFixed(1)} GB)` : '',
    ),
  ]
}

/** CLI goals. @param {Record<string, any>} cli  what runCliSection collected */
export function cliGoals(cli) {
  const a = cli.available
  const s = cli.shim
  return [
    row(
      'connector available --json (warm daemon) ÷ node -e 0',
      a?.ratio,
      x,
      '≤ 2.00x',
      (v) => v <= 2,
      a ? ` (${a.ms.toFixed(0)} / ${a.nodeMs.toFixed(0)} ms)` : '',
    ),
    row(
      'shim overhead (tutti-connector-everything --version)',
      s?.overheadMs,
      (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} ms`,
      '≤ 3 ms',
      (v) => v <= 3,
      s ? ` (${s.shimMs.toFixed(1)} / ${s.directMs.toFixed(1)} ms)` : '',
    ),
    row('daemon fork-to-healthy', cli.fork?.ms, msText, '≤ 400 ms', (v) => v <= 400),
    row('kill -9 recovery: next connector available', cli.recovery?.ms, msText, '≤ 700 ms', (v) => v <= 700),
  ]
}
