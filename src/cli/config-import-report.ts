import type { ImportReport } from '../runtime/client/config-imports.js'
import { describeState } from './outcome-flags.js'

type Entry = ImportReport['entries'][number]

/** What an imported connector runs or reaches, for the dry run: `node /x/index.js`, `https://host/mcp`. */
function target(manifest: Entry['manifest']): string | undefined {
  const mcp = (
    manifest as { mcp?: { transport?: string; command?: string; args?: string[]; url?: string } } | undefined
  )?.mcp
  if (!mcp) return undefined
  return mcp.transport === 'http' ? mcp.url : [mcp.command, ...(mcp.args ?? [])].join(' ')
}

/**
 * `install --from` for a person: one line per server, then what was stored, what is still needed and what was skipped.
 */
export function importReportText(report: ImportReport): string {
  const lines: string[] = []
  for (const e of report.entries) {
    const key = e.key ?? e.name
    if (e.outcome === 'not imported' || e.outcome === 'failed') {
      lines.push(`${e.outcome} ${e.name} (${e.origin}): ${e.reason ?? 'no reason given'}`)
      for (const s of e.skipped) lines.push(`  skipped: ${s}`)
      continue
    }
    const state = e.outcome === 'would install' ? '' : ` (${describeState(e.state)})`
    const version = e.version ? ` ${e.version}` : ''
    lines.push(`${e.outcome} ${key}${version}${state}, from "${e.name}" in ${e.origin}`)
    const runs = target(e.manifest)
    if (runs) lines.push(`  runs: ${runs}`)
    if (e.storedCredentials.length) {
      const verb = e.outcome === 'would install' ? 'would be stored' : 'stored'
      lines.push(`  credentials from the config: ${e.storedCredentials.join(', ')} (${verb} 0600, never shown)`)
    }
    for (const name of e.needs) lines.push(`  needs ${name}: tutti connector connect ${key} --env ${name}=…`)
    for (const s of e.skipped) lines.push(`  skipped: ${s}`)
  }
  const failed = report.entries.filter((e) => e.outcome === 'failed').length
  if (failed) lines.push(`${failed} of ${report.entries.length} servers failed`)
  if (report.dryRun) lines.push('dry run: nothing was installed or stored')
  return `${lines.join('\n')}\n`
}
