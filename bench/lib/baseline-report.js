// The notes of the rows that compare this build with the baseline build
// (BENCH_BASELINE): the ratios of every round, and the baseline's setup.
import { LEGACY, MODERN } from './clients.js'

/** @param {unknown} v @param {number} d */
const fixed = (v, d) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '-')
/** @param {string} e */
const eraName = (e) => (e === MODERN ? '2026-07-28' : e === LEGACY ? '2025-06-18' : e)

/**
 * tools/call: this build ÷ the baseline per round, per era (none when the baseline was not a target).
 * @param {Record<string, import('./ratios.js').Ratio>} ratios @param {string} commit
 */
export function callBaselineNotes(ratios, commit) {
  if (!ratios[`vsBaseline calls/s ${LEGACY}`]) return []
  /** @param {string} name */
  const per = (name) => (ratios[name]?.perRound ?? []).map((v) => fixed(v, 2)).join(' ')
  return [LEGACY, MODERN].map(
    (e) =>
      `  tutti ${eraName(e)} ÷ baseline ${commit}: calls/s ${per(`vsBaseline calls/s ${e}`)}; ` +
      `median ms ${per(`vsBaseline median ms ${e}`)}; CPU/call ${per(`vsBaseline cpu/call ${e}`)}`,
  )
}

/**
 * The notes and failures of the baseline build's tools/list rows.
 * @param {import('./list-section.js').ListSection} l @param {string[]} notes @param {string[]} failures
 */
export function listBaselineNotes(l, notes, failures) {
  const b = l.baseline
  if (!b) return
  /** @param {string} name */
  const per = (name) =>
    b.eras.map(
      (e) => `${eraName(e.era)} ${(b.ratios?.[`${name} ${e.era}`]?.perRound ?? []).map((v) => fixed(v, 2)).join(' ')}`,
    )
  notes.push(
    `tools/list ÷ baseline ${b.commit}, per round (round 1 … n): median ${per('median').join(', ')}; ` +
      `daemon CPU ms/list ${per('cpu').join(', ')}`,
  )
  /** @param {import('./list-section.js').ListEra[]} eras */
  const cpu = (eras) => eras.map((e) => `${eraName(e.era)} ${fixed(e.cpuMs, 2)}`).join(', ')
  notes.push(`tools/list: daemon CPU ms per list (medians of rounds): ${cpu(l.eras)}; baseline ${cpu(b.eras)}`)
  const each = b.eras.map(
    (e) =>
      `${eraName(e.era)} ${e.bytes ? `${(e.bytes / 1048576).toFixed(2)} MiB` : '?'}, p99 ${fixed(e.p99, 1)} ms, ` +
      `with the JSON.parse ${fixed(e.withParseMedian, 1)} ms`,
  )
  if (b.setup.installMs !== undefined)
    notes.push(
      `tools/list, baseline ${b.commit}: installed in ${(b.setup.installMs / 1000).toFixed(1)} s, all tools listed ` +
        `${fixed((b.setup.readyMs ?? NaN) / 1000, 1)} s after its first install; ${each.join('; ')}`,
    )
  if (b.setup.error) failures.push(`tools/list, baseline ${b.commit}: ${b.setup.error}`)
  for (const e of b.eras) if (e.error) failures.push(`tools/list, baseline ${b.commit}, ${eraName(e.era)}: ${e.error}`)
}
