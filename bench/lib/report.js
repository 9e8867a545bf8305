// Rendering the results as plain-text tables (ratios against the baseline).

/**
 * @param {string[][]} rows  first row is the header
 * @param {('l' | 'r')[]} align
 */
export function table(rows, align) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows
    .map((r, ri) => {
      const line = r.map((cell, i) => (align[i] === 'r' ? (cell ?? '').padStart(widths[i]) : (cell ?? '').padEnd(widths[i]))).join('  ').trimEnd()
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line
    })
    .join('\n')
}

const ms = (v) => (Number.isFinite(v) ? v.toFixed(3) : '-')
const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : '-')
const plus = (v) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(3)}` : '-')

/** Rows that failed: one line each, with the reason. */
function failures(rows) {
  return rows.filter((r) => r.error).map((r) => `  ${r.label}${r.era ? ` ${r.era}` : ''}${r.client === 'raw' ? ' [raw client]' : ''}: ${r.error}`)
}

const measured = (r) => !!(r.latency && r.throughput)
/** Peers are the (c) targets: everything but the baseline and tutti. */
const isPeer = (r) => r.target !== 'direct' && r.target !== 'tutti'

/**
 * @param {import('./call-section.js').CallRow[]} rows
 * @param {import('./config.js').BenchConfig} cfg
 */
export function renderCallSection(rows, cfg) {
  const base = rows.find((r) => r.target === 'direct' && r.client === 'sdk' && measured(r))
  // the raw rows' own yardstick: the fastest peer through the same raw client
  /** @type {import('./call-section.js').CallRow | undefined} */
  let bestPeer
  for (const r of rows) if (r.client === 'raw' && isPeer(r) && r.throughput && r.latency && (!bestPeer?.throughput || r.throughput.callsPerSec > bestPeer.throughput.callsPerSec)) bestPeer = r
  const header = ['target', 'client', 'era', 'transport', 'tool', 'median ms', 'p99 ms', 'median vs (a)', 'added median ms', 'calls/s', 'calls/s vs (a)', 'calls/s vs best peer', 'client CPU', 'gateway CPU ms/call']
  // SDK rows first (as measured), then the raw-client rows
  const ordered = [...rows.filter((r) => r.client !== 'raw'), ...rows.filter((r) => r.client === 'raw')]
  const body = ordered.map((r) => {
    const client = r.client === 'raw' ? 'raw' : 'SDK'
    if (!measured(r)) return [r.label, client, r.era ?? '', r.transport ?? '', r.tool ?? '', `FAILED: ${r.error ?? 'no result'}`]
    return [
      r.label,
      client,
      r.negotiated && r.negotiated !== r.era ? `${r.era} (got ${r.negotiated})` : (r.era ?? ''),
      r.transport ?? '',
      r.tool ?? '',
      ms(r.latency.median),
      ms(r.latency.p99),
      base ? ratio(r.latency.median / base.latency.median) : '-',
      base ? plus(r.latency.median - base.latency.median) : '-',
      r.throughput.callsPerSec.toFixed(0),
      base ? ratio(r.throughput.callsPerSec / base.throughput.callsPerSec) : '-',
      r.client === 'raw' && bestPeer ? ratio(r.throughput.callsPerSec / bestPeer.throughput.callsPerSec) : '-',
      `${r.throughput.clientCpuPct.toFixed(0)}%`,
      r.gatewayCpuMsPerCall === undefined ? '-' : r.gatewayCpuMsPerCall.toFixed(3),
    ]
  })
  const title = `tools/call: server-everything "echo"; latency over ${cfg.calls} sequential calls (after ${cfg.warmup} warm-up); throughput = ${cfg.concurrentCalls} calls with ${cfg.concurrency} in flight`
  const lines = [title, '', table([header, ...body], ['l', 'l', 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])]
  lines.push(
    '',
    'client: SDK = MCP TypeScript SDK v2 client; raw = node:http with a keep-alive Agent, hand-built JSON-RPC bodies, minimal parsing (HTTP targets only).',
    'vs (a): against (a) direct stdio with the SDK client, for every row (there is no HTTP in (a), so there is no raw baseline).',
    `calls/s vs best peer: raw rows only, against the fastest (c) peer with the raw client${bestPeer ? `: ${bestPeer.label} ${bestPeer.era}, ${bestPeer.throughput.callsPerSec.toFixed(0)} calls/s` : ' (none measured)'}.`,
    'client CPU: CPU time of the benchmark process (the SDK or raw client) during the throughput run, % of one core.',
    'gateway CPU ms/call: CPU time of the gateway process alone (tutti daemon / peer; not the upstream) during the throughput run ÷ calls.',
  )
  if (!base) lines.push('', '(no baseline (a): ratios to (a) not computed)')
  const failed = failures(rows)
  if (failed.length) lines.push('', 'failures:', ...failed)
  return lines.join('\n')
}

/**
 * @param {import('./list-section.js').ListSection} section
 * @param {import('./config.js').BenchConfig} cfg
 */
export function renderListSection(section, cfg) {
  const base = section.rows.find((r) => r.target === 'direct' && r.latency)
  const header = ['target', 'era', 'tools', 'median ms', 'p99 ms', 'median vs (a)', 'added median ms']
  const body = section.rows.map((r) => {
    if (!r.latency) return [r.label, r.era ?? '', '', `FAILED: ${r.error ?? 'no result'}`]
    return [
      r.label,
      r.negotiated && r.negotiated !== r.era ? `${r.era} (got ${r.negotiated})` : (r.era ?? ''),
      String(r.tools ?? ''),
      ms(r.latency.median),
      ms(r.latency.p99),
      base ? ratio(r.latency.median / base.latency.median) : '-',
      base ? plus(r.latency.median - base.latency.median) : '-',
    ]
  })
  const title = `tools/list: ${cfg.listCalls} sequential calls (after ${cfg.listWarmup} warm-up), whole list, no client cache`
  const lines = [title, '', table([header, ...body], ['l', 'l', 'r', 'r', 'r', 'r', 'r'])]
  const s = section.setup
  if (s.installMs !== undefined) {
    lines.push('', `tutti setup: ${section.connectors} connectors installed in ${(s.installMs / 1000).toFixed(1)} s (${cfg.installConcurrency} at a time)${s.readyMs !== undefined ? `; all ${section.connectors * section.toolsPerConnector} tools listed ${(s.readyMs / 1000).toFixed(1)} s after the first install started` : ''}`)
  }
  const failed = failures(section.rows)
  if (failed.length) lines.push('', 'failures:', ...failed)
  return lines.join('\n')
}
