import type { DaemonStatus } from '../runtime/client/daemon-control.js'
import { terminalSafe } from './terminal-text.js'

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
    const pid = c.pid ? ` (pid ${c.pid})` : ''
    const upstream = c.upstream && c.upstream !== 'none' ? `, ${activation}upstream ${c.upstream}${pid}` : ''
    const restarts = c.restarts ? `, ${c.restarts} restart${c.restarts === 1 ? '' : 's'}` : ''
    const status = c.status === 'ready' && c.reason ? `ready (${c.reason})` : c.status
    const reason = c.reason && c.status !== 'ready' ? ` — ${c.reason}` : ''
    const counts = `generation ${c.generation}, ${c.tools} ${c.tools === 1 ? 'tool' : 'tools'}`
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
