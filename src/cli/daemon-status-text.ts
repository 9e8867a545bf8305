import type { DaemonStatus } from '../runtime/client/daemon-control.js'

export function renderDaemonStatus(status: DaemonStatus): string {
  if (!status.running) return 'daemon: not running\n'
  const lines = [
    `daemon: running (pid ${status.pid}, port ${status.port}, version ${status.productVersion}, protocol ${status.protocolVersion})`,
    `uptime: ${Math.round(status.uptimeMs / 1000)}s, sessions: ${status.sessions}`,
  ]
  if (status.connectors.length === 0) lines.push('connectors: none installed')
  for (const c of status.connectors) {
    const upstream = c.upstream && c.upstream !== 'none' ? `, ${c.activation === 'lazy' ? 'lazy ' : ''}upstream ${c.upstream}${c.pid ? ` (pid ${c.pid})` : ''}` : ''
    lines.push(`  ${c.key} ${c.version}: ${c.status}, generation ${c.generation}, ${c.tools} tools${upstream}${c.error ? ` — ${c.error}` : ''}`)
  }
  return `${lines.join('\n')}\n`
}
