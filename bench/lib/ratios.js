// Summaries and ratios of the interleaved tools/call rounds. Every ratio is
// taken between two slots of the same round (measured minutes apart at most,
// under the same load), then the median over the rounds is reported with the
// per-round values beside it. A slot's own figures are the medians over
// rounds of its per-round figures.
import { LEGACY, MODERN } from './clients.js'
import { median } from './measure.js'
import { PEERS } from './call-section.js'

/** @typedef {import('./call-section.js').Slot} Slot */
const FIELDS = /** @type {const} */ ([
  'median',
  'p99',
  'callsPerSec',
  'clientCpuPct',
  'gatewayCpuMsPerCall',
  'clientCpuMsPerCall',
  'upstreamCpuMsPerCall',
])

/** Median of the finite values (NaN when none). @param {(number | undefined)[]} values */
export function medianOf(values) {
  const v = /** @type {number[]} */ (values.filter((x) => Number.isFinite(x))).sort((a, b) => a - b)
  return median(v)
}

/**
 * @param {import('./call-section.js').Slot} slot
 * @returns {Record<typeof FIELDS[number], number> & { rounds: number }}
 */
export function summarize(slot) {
  const ok = slot.rounds.filter((r) => r && !r.error)
  const out = /** @type {any} */ ({ rounds: ok.length })
  for (const f of FIELDS) out[f] = medianOf(ok.map((r) => r[f]))
  return out
}

/**
 * @typedef {object} Ratio
 * @property {string} name
 * @property {number[]} perRound   NaN where a round lacks either side
 * @property {number} median
 * @property {string[]} [by]       per round, which slot was the other side (best peer)
 */

/**
 * @param {{ slots: import('./call-section.js').Slot[] }} call
 * @returns {{ ratios: Record<string, Ratio>, bestPeer?: { target: string, era: string, key: string, roundsBest:
 * Record<string, number> } }}
 */
export function callRatios(call) {
  const rounds = Math.max(0, ...call.slots.map((s) => s.rounds.length))
  /** @param {string} key */
  const find = (key) => call.slots.find((s) => s.key === key)
  /** @param {Slot | undefined} slot @param {number} r @param {typeof FIELDS[number]} field */
  const at = (slot, r, field) => {
    const res = slot?.rounds[r]
    return res && !res.error ? (res[field] ?? NaN) : NaN
  }
  const peers = call.slots.filter((s) => PEERS.includes(s.target) && s.client === 'raw')
  const floorSlot = find(`floor:${LEGACY}:raw`)
  /** @type {Record<string, Ratio>} */
  const ratios = {}
  /** @param {string} name @param {number[]} perRound @param {string[]} [by] */
  const add = (name, perRound, by) => {
    ratios[name] = { name, perRound, median: medianOf(perRound), ...(by ? { by } : {}) }
  }
  const idx = Array.from({ length: rounds }, (_, r) => r)
  /** @param {number} r */
  const bestIn = (r) => {
    /** @type {Slot | undefined} */
    let best
    for (const p of peers)
      if (Number.isFinite(at(p, r, 'callsPerSec')) && (!best || at(p, r, 'callsPerSec') > at(best, r, 'callsPerSec')))
        best = p
    return best
  }
  for (const era of [LEGACY, MODERN]) {
    const t = find(`tutti:${era}:raw`)
    add(
      `cpuVsFloor ${era}`,
      idx.map((r) => at(t, r, 'gatewayCpuMsPerCall') / at(floorSlot, r, 'gatewayCpuMsPerCall')),
    )
    add(
      `callsVsFloor ${era}`,
      idx.map((r) => at(t, r, 'callsPerSec') / at(floorSlot, r, 'callsPerSec')),
    )
    const best = idx.map(bestIn)
    add(
      `callsVsBestPeer ${era}`,
      idx.map((r) => at(t, r, 'callsPerSec') / at(best[r], r, 'callsPerSec')),
      best.map((b) => b?.key ?? '-'),
    )
    add(
      `cpuVsBestPeer ${era}`,
      idx.map((r) => at(t, r, 'gatewayCpuMsPerCall') / at(best[r], r, 'gatewayCpuMsPerCall')),
    )
  }
  const t25 = find(`tutti:${LEGACY}:raw`)
  const t26 = find(`tutti:${MODERN}:raw`)
  add(
    'modernVsLegacy calls/s',
    idx.map((r) => at(t26, r, 'callsPerSec') / at(t25, r, 'callsPerSec')),
  )
  add(
    'modernVsLegacy cpu/call',
    idx.map((r) => at(t26, r, 'gatewayCpuMsPerCall') / at(t25, r, 'gatewayCpuMsPerCall')),
  )
  add(
    'modernVsLegacy median ms',
    idx.map((r) => at(t26, r, 'median') / at(t25, r, 'median')),
  )
  // this build ÷ the baseline build (BENCH_BASELINE), era by era; only when the baseline was a target
  if (call.slots.some((s) => s.target === 'tutti-base'))
    for (const era of [LEGACY, MODERN]) {
      const t = find(`tutti:${era}:raw`)
      const b = find(`tutti-base:${era}:raw`)
      add(
        `vsBaseline calls/s ${era}`,
        idx.map((r) => at(t, r, 'callsPerSec') / at(b, r, 'callsPerSec')),
      )
      add(
        `vsBaseline median ms ${era}`,
        idx.map((r) => at(t, r, 'median') / at(b, r, 'median')),
      )
      add(
        `vsBaseline cpu/call ${era}`,
        idx.map((r) => at(t, r, 'gatewayCpuMsPerCall') / at(b, r, 'gatewayCpuMsPerCall')),
      )
    }

  // the best peer overall: highest median calls/s over the rounds; and how often each was best in a round
  let bestPeer
  let bestRate = -Infinity
  for (const p of peers) {
    const rate = summarize(p).callsPerSec
    if (Number.isFinite(rate) && rate > bestRate) {
      bestRate = rate
      bestPeer = p
    }
  }
  /** @type {Record<string, number>} */
  const roundsBest = {}
  for (const r of idx) {
    const b = bestIn(r)
    if (b) roundsBest[b.key] = (roundsBest[b.key] ?? 0) + 1
  }
  return {
    ratios,
    ...(bestPeer ? { bestPeer: { target: bestPeer.target, era: bestPeer.era, key: bestPeer.key, roundsBest } } : {}),
  }
}
