// The one table `npm run bench` prints: every measure of issue 11 with its
// figure, its goal and whether it is met, grouped by section; then short
// notes (per-round ratios, the best peer, failures, setup times).
import { renderAgentSections } from './agent-report.js'
import { LEGACY, MODERN } from './clients.js'
import { CPU_SOURCE } from './cpu.js'
import { RAW_HTTP } from './raw/http.js'
import { callGoals, cliGoals, listGoals, startGoals } from './goals.js'
import { summarize } from './ratios.js'
import { callBaselineNotes, listBaselineNotes } from './baseline-report.js'

/**
 * @param {string[][]} rows  first row is the header; a row of one cell is a group heading
 * @param {('l' | 'r')[]} align
 */
export function table(rows, align) {
  const cells = rows.filter((r) => r.length > 1)
  const widths = rows[0].map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  /** @param {string[]} r */
  const line = (r) =>
    r
      .map((cell, i) => (align[i] === 'r' ? (cell ?? '').padStart(widths[i]) : (cell ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  return rows
    .map((r, ri) => {
      if (ri === 0) return `${line(r)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`
      return r.length === 1 ? r[0] : line(r)
    })
    .join('\n')
}

/** @param {unknown} v @param {number} d */
const fixed = (v, d) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '-')
/** @param {string} e */
const eraName = (e) => (e === MODERN ? '2026-07-28' : e === LEGACY ? '2025-06-18' : e)
/** @type {Record<string, string>} */
const LABELS = {
  direct: 'direct stdio',
  floor: 'floor: node:http → stdio, id-mapped',
  tutti: 'tutti',
  'mcp-proxy': 'mcp-proxy',
  supergateway: 'supergateway',
  'mcp-hub': 'mcp-hub',
}

/**
 * A slot's row name: target (the baseline build by its commit), era, and the client when it is not the usual one.
 * @param {import('./call-section.js').Slot} s @param {import('./config.js').BenchConfig} cfg @param {string} [bestKey]
 */
function slotName(s, cfg, bestKey) {
  const client = s.target === 'direct' ? ' (SDK client)' : s.client === 'sdk' ? ' [SDK client]' : ''
  const e = s.target === 'direct' || s.target === 'floor' || !s.era ? '' : ` ${eraName(s.era)}`
  const got = s.negotiated && s.era && s.negotiated !== s.era ? ` (got ${s.negotiated})` : ''
  const name = s.target === 'tutti-base' ? `baseline tutti ${cfg.baseline?.commit ?? '?'}` : LABELS[s.target]
  return `${name ?? s.target}${e}${client}${got}${s.key === bestKey ? ' ← best peer' : ''}`
}

/** @param {import('./goals.js').GoalRow} g */
const goalRow = (g) => [`  ${g.measure}`, '', '', '', g.figure, g.goal, g.met]

/**
 * What run.js collects (and writes to latest.json).
 * @typedef {object} Results
 * @property {string} startedAt
 * @property {string} [finishedAt]
 * @property {import('./config.js').BenchConfig} cfg
 * @property {{ node: string, platform: string, cpus: number, cpuModel: string, tutti: string,
 *   packages: Record<string, string> }} environment
 * @property {{ start: number[], end?: number[] }} loadavg
 * @property {Awaited<ReturnType<typeof import('./call-section.js').runCallSection>>
 *   & { ratios: ReturnType<typeof import('./ratios.js').callRatios> }} [call]
 * @property {import('./list-section.js').ListSection} [list]
 * @property {Awaited<ReturnType<typeof import('./start-section.js').runStartSection>>} [start]
 * @property {Record<string, any>} [cli]
 * @property {Awaited<ReturnType<typeof import('./bridge-section.js').runBridgeSection>>} [bridge]
 * @property {Awaited<ReturnType<typeof import('./agent-start-section.js').runAgentStartSection>>} [agentStart]
 * @property {Awaited<ReturnType<typeof import('./sessions-memory-section.js').runSessionsMemorySection>>}
 *   [sessionsMemory]
 * @property {Awaited<ReturnType<typeof import('./views-section.js').runViewsSection>>} [views]
 * @property {string} [error]
 * @property {{ leftoversKilled: number, survivors: string[] }} [processes]
 * @property {string} [table]
 */

/**
 * @param {Results} results
 * @returns {string}
 */
export function renderReport(results) {
  const { cfg } = results
  const head = ['measure', 'calls/s', 'median ms', 'CPU ms/call', 'figure', 'goal', 'met']
  /** @type {string[][]} */
  const rows = [head]
  const notes = []
  const failures = []
  if (results.call) {
    const { slots, ratios } = results.call
    rows.push([
      `tools/call of echo: ${cfg.concurrency} in flight → calls/s, sequential median ms, gateway CPU ms/call; ` +
        `medians of ${cfg.rounds} interleaved rounds`,
    ])
    for (const s of slots) {
      const sum = summarize(s)
      if (!sum.rounds) {
        rows.push([`  ${slotName(s, cfg)}`, '', '', '', 'FAILED', '', ''])
        failures.push(`${slotName(s, cfg)}: ${s.error ?? 'no round measured'}`)
        continue
      }
      rows.push([
        `  ${slotName(s, cfg, ratios.bestPeer?.key)}`,
        fixed(sum.callsPerSec, 0),
        fixed(sum.median, 2),
        fixed(sum.gatewayCpuMsPerCall, 3),
        '',
        '',
        '',
      ])
      if (s.error) failures.push(`${slotName(s, cfg)}: ${s.error} (${sum.rounds} of ${cfg.rounds} rounds measured)`)
    }
    rows.push(...callGoals(ratios, cfg.baseline).map(goalRow))
    /** @param {string} name */
    const per = (name) => {
      const r = ratios.ratios[name]
      return r ? r.perRound.map((v) => fixed(v, 2)).join(' ') : '-'
    }
    notes.push('per-round ratios (round 1 … n; the figure is their median):')
    for (const e of [LEGACY, MODERN]) {
      notes.push(
        `  tutti ${eraName(e)}: CPU/call ÷ floor ${per(`cpuVsFloor ${e}`)}; ` +
          `calls/s ÷ best peer ${per(`callsVsBestPeer ${e}`)}; calls/s ÷ floor ${per(`callsVsFloor ${e}`)}; ` +
          `CPU/call ÷ best peer ${per(`cpuVsBestPeer ${e}`)}`,
      )
    }
    notes.push(
      `  tutti 2026-07-28 ÷ 2025-06-18: calls/s ${per('modernVsLegacy calls/s')}; ` +
        `CPU/call ${per('modernVsLegacy cpu/call')}; median ms ${per('modernVsLegacy median ms')}`,
    )
    if (cfg.baseline) notes.push(...callBaselineNotes(ratios.ratios, cfg.baseline.commit))
    // on two shared cores calls/s follows the CPU every call costs all three processes, not the gateway's alone
    const split = slots
      .map((s) => ({ s, sum: summarize(s) }))
      .filter(({ sum }) => sum.rounds && Number.isFinite(sum.upstreamCpuMsPerCall))
    if (split.length) {
      const perSlot = split.map(({ s, sum }) => {
        const all = sum.clientCpuMsPerCall + sum.gatewayCpuMsPerCall + sum.upstreamCpuMsPerCall
        return (
          `${s.target === 'floor' ? 'floor' : slotName(s, cfg)} ${fixed(sum.clientCpuMsPerCall, 3)} + ` +
          `${fixed(sum.gatewayCpuMsPerCall, 3)} + ${fixed(sum.upstreamCpuMsPerCall, 3)} = ${fixed(all, 3)}`
        )
      })
      notes.push(`CPU ms per call, client + gateway + upstream = all (medians): ${perSlot.join('; ')}`)
    }
    const bp = ratios.bestPeer
    if (bp)
      notes.push(
        `best peer: ${LABELS[bp.target]} ${eraName(bp.era)} (highest median calls/s); best in a round: ${Object.entries(
          bp.roundsBest,
        )
          .map(([k, n]) => `${k.split(':').slice(0, 2).join(' ')} ${n}×`)
          .join(', ')}`,
      )
    notes.push(
      `every row first runs ${cfg.warmupBurst} untimed calls with ${cfg.concurrency} in flight; ` +
        `each round measures every row once (${cfg.roundWarmup} untimed with ${cfg.concurrency} in flight, ` +
        `${cfg.warmup} untimed sequential, ${cfg.calls} sequential, ` +
        `${cfg.concurrentCalls} with ${cfg.concurrency} in flight in ${cfg.bursts} bursts ` +
        `interleaved over the rows), in an order rotated by one per round and reversed every other round; ` +
        `gateway CPU from ${CPU_SOURCE}, the gateway process alone (not its upstream); ` +
        `the raw client's HTTP: ${RAW_HTTP}`,
    )
  }
  if (results.list) {
    const l = results.list
    rows.push([
      `tools/list: ${l.connectors} connectors × ${l.toolsPerConnector} tools through tutti, raw client, whole list; ` +
        `median of ${cfg.rounds} rounds × ${cfg.listCalls} calls`,
    ])
    rows.push(...listGoals(l).map(goalRow))
    const bytes = l.eras
      .map((e) => `${eraName(e.era)} ${e.bytes ? `${(e.bytes / 1048576).toFixed(2)} MiB` : '?'}`)
      .join(', ')
    const p99 = l.eras.map((e) => `${eraName(e.era)} ${fixed(e.p99, 1)} ms`).join(', ')
    const withParse = l.eras.map((e) => `${eraName(e.era)} ${fixed(e.withParseMedian, 1)} ms`).join(', ')
    notes.push(
      `tools/list: medians are to the answer's last byte; with the raw client's JSON.parse of it: ${withParse}`,
    )
    if (l.setup.installMs !== undefined)
      notes.push(
        `tools/list: ${l.connectors} connectors installed in ${(l.setup.installMs / 1000).toFixed(1)} s; ` +
          `all tools listed ${fixed((l.setup.readyMs ?? NaN) / 1000, 1)} s after the first install; ` +
          `answer body ${bytes}; p99 ${p99}`,
      )
    if (l.setup.error) failures.push(`tools/list: ${l.setup.error}`)
    for (const e of l.eras) if (e.error) failures.push(`tools/list ${eraName(e.era)}: ${e.error}`)
    listBaselineNotes(l, notes, failures)
  }
  if (results.start) {
    const st = results.start
    rows.push([
      `daemon start with ${st.connectors} installed stdio connectors (no declared tools) after a first run listed ` +
        `their tools; median of ${st.rounds.length}`,
    ])
    rows.push(...startGoals(st).map(goalRow))
    const s = st.summary
    if (Number.isFinite(s.listedMs))
      notes.push(
        `daemon start: every tool served ${fixed(s.listedMs, 0)} ms after the start (includes a session prepare); ` +
          `processes then ${fixed(s.processesAfterList, 0)}; ` +
          `at ready ${fixed(s.ready, 0)} connectors ready, ${fixed(s.running, 0)} upstreams running`,
      )
    if (st.error) failures.push(`daemon start: ${st.error}`)
  }
  if (results.cli) {
    const c = results.cli
    rows.push([
      `CLI and shims (medians: ${cfg.cliRuns} runs, shim ${cfg.shimRuns}, ` +
        `fork ${cfg.forkRuns}, recovery ${cfg.recoveryRuns})`,
    ])
    rows.push(...cliGoals(c).map(goalRow))
    if (c.error) failures.push(`cli: ${c.error}`)
    for (const [k, v] of Object.entries(c.errors ?? {})) failures.push(`cli ${k}: ${v}`)
  }
  if (results.bridge) {
    const b = results.bridge
    rows.push([
      `tutti session bridge: sequential tools/call of echo over stdio vs direct HTTP to the same daemon, call by ` +
        `call; medians of ${cfg.rounds} rounds`,
    ])
    for (const e of b.eras) {
      rows.push([`  direct HTTP ${eraName(e.era)}`, '', fixed(e.direct, 3), '', '', '', ''])
      rows.push([`  bridge ${eraName(e.era)}`, '', fixed(e.bridge, 3), fixed(e.bridgeCpuMsPerCall, 3), '', '', ''])
      rows.push([
        `  bridge added median latency, ${eraName(e.era)}`,
        '',
        '',
        '',
        `${e.added >= 0 ? '+' : ''}${fixed(e.added, 3)} ms`,
        '',
        '',
      ])
    }
    if (b.eras.length) {
      const added = b.eras.map((e) => `${eraName(e.era)} ${e.rounds.map((r) => fixed(r.added, 3)).join(' ')}`)
      notes.push(
        `bridge: added latency per round (median of the call pairs' bridge − direct, ms): ${added.join('; ')}; ` +
          `CPU ms/call is the bridge process's`,
      )
    }
    if (b.error) failures.push(`bridge: ${b.error}`)
  }
  const agents = renderAgentSections(results)
  rows.push(...agents.rows)
  notes.push(...agents.notes)
  failures.push(...agents.failures)
  /** @param {number[] | undefined} v */
  const la = (v) => (v ? v.map((n) => n.toFixed(2)).join(' ') : '?')
  rows.push(
    ['machine'],
    [
      '  load average (1, 5, 15 min) at start → end',
      '',
      '',
      '',
      `${la(results.loadavg?.start)} → ${la(results.loadavg?.end)}`,
      '',
      '',
    ],
  )
  const goals = rows.filter((r) => r.length > 1 && r[6] && r !== head)
  const met = goals.filter((r) => r[6] === 'yes').length
  const unmeasured = goals.filter((r) => r[6] === 'n/a').length
  const lines = [
    table(rows, ['l', 'r', 'r', 'r', 'l', 'l', 'l']),
    '',
    `goals met: ${met} of ${goals.length}${unmeasured ? ` (${unmeasured} not measured)` : ''}`,
  ]
  lines.push(...notes)
  if (failures.length) lines.push('failures:', ...failures.map((f) => `  ${f}`))
  return lines.join('\n')
}
