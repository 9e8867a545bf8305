import type { DaemonStatus } from '../runtime/client/daemon-control.js'
import type { ToolFilterView } from '../runtime/control-protocol/connector-state.js'
import { terminalSafe } from './terminal-text.js'

/** `tools: only a, b (connect); always loaded: a (manifest); not in its table: x` */
function toolFilterLine(f: ToolFilterView): string {
  const by = (who: string | undefined) => (who === 'user' ? 'connect' : 'manifest')
  const parts: string[] = []
  const shown = f.allow ? `only ${f.allow.join(', ')}` : f.hide ? `all but ${f.hide.join(', ')}` : 'all'
  if (f.from.tools) parts.push(`tools: ${shown} (${by(f.from.tools)})`)
  if (f.alwaysLoad) parts.push(`always loaded: ${f.alwaysLoad.join(', ') || 'none'} (${by(f.from.alwaysLoad)})`)
  if (f.unmatched) parts.push(`not in its table: ${f.unmatched.join(', ')}`)
  return parts.join('; ')
}

export function renderDaemonStatus(status: DaemonStatus): string {
  if (!status.running) return 'daemon: not running\n'
  const lines = [
    `daemon: running (pid ${status.pid}, port ${status.port}, ` +
      `version ${status.productVersion}, protocol ${status.protocolVersion})`,
    `uptime: ${Math.round(status.uptimeMs / 1000)}s, sessions: ${status.sessions}`,
  ]
  if (status.connectors.length === 0) lines.push('connectors: none installed')
  for (const c of status.connectors) {
    const activation = c.activation && c.activation !== 'eager' ? `${c.activation} ` : ''
    const link = [c.pid ? `pid ${c.pid}` : '', c.protocolVersion ? `MCP ${c.protocolVersion}` : ''].filter(Boolean)
    const pid = link.length ? ` (${link.join(', ')})` : ''
    const upstream = c.upstream && c.upstream !== 'none' ? `, ${activation}upstream ${c.upstream}${pid}` : ''
    const restarts = c.restarts ? `, ${c.restarts} restart${c.restarts === 1 ? '' : 's'}` : ''
    const status = c.status === 'ready' && c.reason ? `ready (${c.reason})` : c.status
    const reason = c.reason && c.status !== 'ready' ? ` — ${c.reason}` : ''
    const hidden = c.hiddenTools ? ` (${c.hiddenTools} hidden)` : ''
    const counts = `generation ${c.generation}, ${c.tools} ${c.tools === 1 ? 'tool' : 'tools'}${hidden}`
    lines.push(`  ${c.key} ${c.version}: ${status}, ${counts}${upstream}${restarts}${reason}`)
    if (c.nextRetryAt) {
      const seconds = Math.max(0, Math.round((Date.parse(c.nextRetryAt) - Date.now()) / 1000))
      lines.push(`    next retry: ${c.nextRetryAt} (in ${seconds} s)`)
    }
    if (c.command) lines.push(`    command: ${c.command}`)
    if (c.settings)
      lines.push(
        `    settings: ${Object.entries(c.settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`,
      )
    if (c.toolFilter) lines.push(`    ${toolFilterLine(c.toolFilter)}`)
    if (c.cli && c.cli !== 'ready') lines.push(`    cli: ${c.cli}${c.cliReason ? ` — ${c.cliReason}` : ''}`)
    if (c.lastError && c.lastError !== c.reason) lines.push(`    last error: ${c.lastError}`)
  }
  if (status.sessionActivity.length) lines.push('sessions:')
  for (const s of status.sessionActivity) {
    const context = s.context
      ? `, ${s.context.tools} tools, ${(s.context.bytes / 1000).toFixed(1)} kB (~${s.context.tokens} tokens)`
      : ''
    const view = s.view ? `; view: ${s.view.join(' + ')}` : ''
    lines.push(`  ${s.session} (${s.provider}, ${s.workspace}): ${s.requests} requests${context}${view}`)
  }
  // every line carries manifest or upstream text (versions, reasons, stderr): escape it whole
  return `${lines.map(terminalSafe).join('\n')}\n`
}
