import type { AvailableResult } from '../runtime/control-protocol/available.js'
import { describeState } from './state-line.js'
import { terminalSafe } from './terminal-text.js'

/** 8.1 kB: what a table of tool definitions costs a model's context, at a glance. */
function size(bytes: number): string {
  return bytes < 1000
    ? `${bytes} B`
    : bytes < 1_000_000
      ? `${(bytes / 1000).toFixed(1)} kB`
      : `${(bytes / 1_000_000).toFixed(1)} MB`
}

/** The human view of `connector available`: one block per connector, control characters escaped. */
export function renderAvailable(result: AvailableResult): string {
  const session = sessionLines(result)
  if (result.connectors.length === 0)
    return result.session?.narrowed
      ? `This session's view shows no connector.\n${session.join('\n')}\n`
      : 'No connectors are installed.\n'
  const rows: string[][] = [['CONNECTOR', 'INTERFACE', 'USE', 'CONTEXT', 'STATUS']]
  for (const c of result.connectors) {
    const label = `${c.name} (${c.key})`
    if (c.interfaces.length === 0) rows.push([label, '-', '-', '-', '-'])
    c.interfaces.forEach((i, n) => {
      const use = i.kind === 'mcp' ? `MCP server "${i.serverName}", tools ${i.toolPrefix}*` : i.command
      const context =
        i.kind === 'mcp' && i.tools !== undefined
          ? `${i.tools} tool${i.tools === 1 ? '' : 's'}${i.hiddenTools ? ` (${i.hiddenTools} hidden)` : ''}, ` +
            size(i.schemaBytes ?? 0)
          : '-'
      rows.push([n === 0 ? label : '', i.kind, use, context, describeState(i)])
    })
  }
  // escaped before measuring, so the columns line up with what is printed
  for (const r of rows) r.forEach((cell, col) => (r[col] = terminalSafe(cell)))
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)))
  const lines = rows.map((r) =>
    r
      .map((cell, col) => cell.padEnd(widths[col]!))
      .join('  ')
      .trimEnd(),
  )
  const out = [lines[0]!, ...lines.slice(1)]
  const withSkills = result.connectors.filter((c) => c.skills.length > 0)
  if (withSkills.length) {
    out.push('', 'SKILLS')
    for (const c of withSkills)
      for (const s of c.skills)
        out.push(terminalSafe(`  ${s.name} (${c.key})  ${s.title ? `${s.title}: ` : ''}${s.description}`))
  }
  const described = result.connectors.filter((c) => c.description)
  if (described.length) {
    out.push('', 'ABOUT')
    // keys are [a-z0-9-]: padding them aligns the descriptions as one column
    const width = Math.max(...described.map((c) => c.key.length))
    for (const c of described) out.push(terminalSafe(`  ${c.key.padEnd(width)}  ${c.description}`))
  }
  return `${[...out, ...session].join('\n')}\n`
}

/** Inside a session: what its tools cost the model's context, and whether its view narrows what it sees. */
function sessionLines(result: AvailableResult): string[] {
  if (!result.session) return []
  const { context, narrowed } = result.session
  const tools = `${context.tools} tool${context.tools === 1 ? '' : 's'}`
  const what = `${tools}, ${size(context.bytes)} (~${context.tokens} tokens)`
  const scope = narrowed
    ? 'narrowed by its view (--connectors, --hide-connectors, .tutti/connectors.json)'
    : 'every connector'
  return ['', 'SESSION', `  this session sees ${what}: ${scope}`]
}
