import type { AvailableResult } from '../control-protocol/available.js'

/**
 * The runtime guidance text: how to use connectors natively. It describes
 * the three native mechanisms and the one discovery command; nothing else.
 */
export function runtimePrompt(available: AvailableResult): string {
  const lines = [
    'Connectors are available in this session through your native mechanisms:',
    '- MCP tools: the MCP server named "connector" provides the tools of every connector, named <connector>_<tool> ' +
      '(for example notes_search_nodes). The list can change during the session; when you are told it changed, list ' +
      'the tools again.',
    '- Commands: a connector with a command line provides tutti-connector-<connector> on your PATH. Run it like any ' +
      'other command; start with --help.',
    '- Skills: connector Skills are in your Skill roots. Read a Skill when its description fits the task.',
    'Run `tutti connector available` to see the connectors, their interfaces and whether each is ready. Use an ' +
      'interface only when it is ready.',
  ]
  const ready = available.connectors.filter((c) => c.interfaces.some((i) => i.status === 'ready'))
  if (ready.length) {
    lines.push('At the start of this session:')
    for (const c of ready) {
      const parts = c.interfaces
        .filter((i) => i.status === 'ready')
        .map((i) => (i.kind === 'mcp' ? `MCP tools ${i.toolPrefix}*` : `command ${i.command}`))
      const skills = c.skills.length ? `; Skills: ${c.skills.map((s) => s.name).join(', ')}` : ''
      lines.push(`- ${c.name} (${c.key}): ${parts.join(', ')}${skills}`)
    }
  }
  return lines.join('\n')
}
