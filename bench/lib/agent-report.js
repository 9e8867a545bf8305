// The rows and notes of the sections issue 23 asks for (agent-start,
// sessions-memory, views), in the table format of report.js: measure,
// calls/s, median ms, CPU ms/call, figure, goal, met. Ratios are against
// baselines of the same run; only the issue's goals have a `met`.
import { row, x } from './goals.js'
import { medianOf } from './ratios.js'
import { censusSummary } from './sessions-memory-section.js'

/** @param {unknown} v @param {number} d */
const fixed = (v, d) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '-')
/** @param {import('./goals.js').GoalRow} g */
const goalRow = (g) => [`  ${g.measure}`, '', '', '', g.figure, g.goal, g.met]
/** @param {number[]} values @param {number} d */
const list = (values, d) => values.map((v) => fixed(v, d)).join(' ')

/**
 * A figure without a goal.
 * @param {string} measure @param {number | undefined} value @param {(v: number) => string} show @param {string} [extra]
 * @returns {import('./goals.js').GoalRow}
 */
const info = (measure, value, show, extra = '') => ({ ...row(measure, value, show, '', () => true, extra), met: '' })

/**
 * @typedef {object} Rendered
 * @property {string[][]} rows
 * @property {string[]} notes
 * @property {string[]} failures
 */

/**
 * @param {Awaited<ReturnType<typeof import('./agent-start-section.js').runAgentStartSection>>} a
 * @param {import('./config.js').BenchConfig} cfg
 * @returns {Rendered}
 */
export function renderAgentStart(a, cfg) {
  const rows = [
    [
      `agent start-up: claude -p (Claude Code ${a.claude}) to its first model request, fake model API, ` +
        `tool search ${a.toolSearch}; medians of ${cfg.agentRounds} rounds, each row launched between two of (c)`,
    ],
  ]
  const notes = []
  const failures = []
  for (const r of a.rows) rows.push([`  ${r.label}`, '', fixed(r.median, 0), '', '', '', ''])
  const none = a.rows.find((r) => r.id === 'none')
  for (const r of a.rows) {
    if (r.id === 'none') continue
    const name = `${r.id === 'exec-warm' ? '(a) ' : r.id === 'plain-all' ? '(b) ' : ''}${short(r.id, a.connectors)}`
    const extra = Number.isFinite(r.median) && none ? ` (${fixed(r.median, 0)} / ${fixed(none.median, 0)} ms)` : ''
    if (r.id === 'exec-warm')
      rows.push(goalRow(row(`${name} ÷ (c) no MCP servers`, r.ratio, x, '≤ 1.20x', (v) => v <= 1.2, extra)))
    else rows.push(goalRow(info(`${name} ÷ (c) no MCP servers`, r.ratio, x, extra)))
  }
  // nothing launched (no Claude Code, a failed install): the goal is still counted, as not measured
  if (!a.rows.length)
    rows.push(goalRow(row(`(a) ${short('exec-warm', a.connectors)} ÷ (c)`, undefined, x, '≤ 1.20x', () => false)))
  notes.push(
    `agent start-up, per round (ms; ÷ no MCP servers): ${a.rows
      .map((r) => `${r.id} ${list(r.ms, 0)} (${list(r.perRound, 2)})`)
      .join('; ')}`,
  )
  const warm = a.rows.find((r) => r.id === 'exec-warm')
  const prepared = a.rows.find((r) => r.id === 'prepared')
  if (warm && prepared && none) {
    // the two rows are not launched side by side: their ratios to the (c) launches around each are compared
    const added = warm.perRound.map((v, i) => (v - prepared.perRound[i]) * (none.median ?? NaN))
    notes.push(
      `agent start-up: what session exec adds to the prepared session (its own start, the prepare, the spawn), ` +
        `(a) ÷ (c) − prepared ÷ (c), times (c)'s median, per round: ${list(added, 0)} ms; ` +
        `median ${fixed(medianOf(added), 0)} ms`,
    )
  }
  const short_ = a.rows
    .filter((r) => r.expectTools >= 0 && r.tools.some((n) => Number.isFinite(n) && n !== r.expectTools))
    .map((r) => `${r.id} named ${list(r.tools, 0)} of ${r.expectTools}`)
  notes.push(
    `agent start-up: MCP tools named in each first request ${
      short_.length ? `differ from the servers' own: ${short_.join('; ')}` : 'were every tool of its servers'
    }; ${a.connectors} connectors installed in ${fixed((a.setup.installMs ?? NaN) / 1000, 1)} s; ` +
      `upstream processes of the daemon after every launch: ${a.setup.upstreamsAtEnd ?? '?'}`,
  )
  if (a.error) failures.push(`agent-start: ${a.error}`)
  for (const r of a.rows) if (r.error) failures.push(`agent-start ${r.id}: ${r.error}`)
  return { rows, notes, failures }
}

/**
 * @param {Awaited<ReturnType<typeof import('./sessions-memory-section.js').runSessionsMemorySection>>} m
 * @param {import('./config.js').BenchConfig} cfg
 * @returns {Rendered}
 */
export function renderSessionsMemory(m, cfg) {
  const rows = [
    [
      `${m.sessions} concurrent Claude Code sessions × ${m.connectors} connectors, each calling 2 (${m.called} ` +
        `distinct): processes and memory once every session has its tool results; medians of ${cfg.sessionsRounds}`,
    ],
  ]
  const notes = []
  const failures = []
  const sums = Object.fromEntries(m.setups.map((s) => [s.id, censusSummary(s.rounds)]))
  for (const s of m.setups) {
    const c = sums[s.id]
    const figure = c.rounds
      ? `${fixed(c.upstreams, 0)} upstreams, ${fixed(c.processes, 0)} processes; RSS ${fixed(c.rssMb, 0)} MB, ` +
        `PSS ${fixed(c.pssMb, 0)} MB`
      : 'FAILED'
    rows.push([`  ${s.label}`, '', '', '', figure, '', ''])
    if (c.rounds)
      notes.push(
        `sessions-memory ${s.id}, by kind (processes: RSS / PSS MB): ${Object.entries(c.byKind)
          .filter(([, k]) => k.n > 0)
          .map(([kind, k]) => `${kind} ${fixed(k.n, 0)}: ${fixed(k.rssMb, 0)} / ${fixed(k.pssMb, 0)}`)
          .join('; ')}`,
      )
    if (s.error) failures.push(`sessions-memory ${s.id}: ${s.error}`)
  }
  const { tutti, own } = sums
  rows.push(
    goalRow(
      row(
        'through tutti: upstream processes',
        tutti.rounds ? tutti.upstreams : undefined,
        (v) => v.toFixed(0),
        `= ${m.called} called (not ${m.sessions} × ${m.connectors})`,
        (v) => v === m.called,
        own.rounds ? `; own servers: ${fixed(own.upstreams, 0)}` : '',
      ),
    ),
    goalRow(info('PSS of everything, tutti ÷ own servers', tutti.pssMb / own.pssMb, x)),
    goalRow(info('RSS of everything, tutti ÷ own servers', tutti.rssMb / own.rssMb, x)),
  )
  if (m.error) failures.push(`sessions-memory: ${m.error}`)
  return { rows, notes, failures }
}

/**
 * @param {Awaited<ReturnType<typeof import('./views-section.js').runViewsSection>>} v
 * @param {import('./config.js').BenchConfig} cfg
 * @returns {Rendered}
 */
export function renderViews(v, cfg) {
  const rows = [
    [
      `per-session views: ${v.sessionsPerKind} sessions of each kind, ${v.connectors} connectors × ` +
        `${v.toolsPerConnector} tools, 2026-07-28, raw client, requests spread over the sessions; ` +
        `medians of ${cfg.rounds} interleaved rounds (CPU: the daemon's)`,
    ],
  ]
  const notes = []
  const failures = []
  for (const op of /** @type {const} */ (['list', 'call'])) {
    for (const k of v.kinds) {
      const what = op === 'list' ? `tools/list (${fixed(k.tools, 0)} tools)` : 'tools/call'
      rows.push([
        `  ${what}, ${k.label}`,
        fixed(medianOf(k.rounds[`${op}PerSec`]), 0),
        fixed(medianOf(k.rounds[`${op}Median`]), 2),
        fixed(medianOf(k.cpu[op]), 3),
        '',
        '',
        '',
      ])
    }
  }
  /** @param {string} key */
  const r = (key) => v.ratios[key]?.median
  /** @param {string} what @param {string} key */
  const name = (what, key) =>
    `${what}, ${key.startsWith('shared') ? 'one shared view' : `${v.sessionsPerKind} views`} ÷ no view`
  // within 10 % of no view: a median at most 1.10x, calls/s at least 0.90x
  /** @param {string} op @param {string} key */
  const median = (op, key) => goalRow(row(name(`${op} median`, key), r(key), x, '≤ 1.10x', (y) => y <= 1.1))
  /** @param {string} op @param {string} key */
  const rate = (op, key) => goalRow(row(name(`${op} calls/s`, key), r(key), x, '≥ 0.90x', (y) => y >= 0.9))
  rows.push(
    median('tools/list', 'subset listMedian'),
    rate('tools/list', 'subset listPerSec'),
    median('tools/list', 'shared listMedian'),
    rate('tools/list', 'shared listPerSec'),
    median('tools/call', 'subset callMedian'),
    rate('tools/call', 'subset callPerSec'),
  )
  notes.push(
    `views, per round ÷ no view: ${Object.entries(v.ratios)
      .map(([k, q]) => `${k} ${list(q.perRound, 2)}`)
      .join('; ')}`,
    `views: first tools/list of each session (its view's first use), median ms: ${v.kinds
      .map((k) => `${k.id} ${fixed(k.firstListMs, 2)}`)
      .join(', ')}; ${v.connectors} connectors installed in ${fixed((v.setup.installMs ?? NaN) / 1000, 1)} s, ` +
      `${v.sessionsPerKind * 3} sessions prepared (prepareRuntime) in ${fixed((v.setup.prepareMs ?? NaN) / 1000, 1)} s`,
  )
  if (v.error) failures.push(`views: ${v.error}`)
  return { rows, notes, failures }
}

/** @param {string} id @param {number} n */
function short(id, n) {
  /** @type {Record<string, string>} */
  const names = {
    'exec-warm': `session exec, ${n} connectors, warm`,
    'exec-cold': `session exec, ${n} connectors, no daemon`,
    prepared: `prepared session, ${n} connectors`,
    'prepared-1': 'prepared session, view of 1 connector',
    'plain-all': `plain ${n} stdio servers`,
    'plain-1': '1 stdio server',
    'http-1': '1 HTTP server',
  }
  return names[id] ?? id
}

/**
 * Every issue-23 section the run measured, in the order run.js runs them.
 * @param {import('./report.js').Results} results
 * @returns {Rendered}
 */
export function renderAgentSections(results) {
  /** @type {Rendered} */
  const all = { rows: [], notes: [], failures: [] }
  const parts = []
  if (results.agentStart) parts.push(renderAgentStart(results.agentStart, results.cfg))
  if (results.sessionsMemory) parts.push(renderSessionsMemory(results.sessionsMemory, results.cfg))
  if (results.views) parts.push(renderViews(results.views, results.cfg))
  for (const p of parts) {
    all.rows.push(...p.rows)
    all.notes.push(...p.notes)
    all.failures.push(...p.failures)
  }
  return all
}
