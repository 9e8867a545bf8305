import type { ConnectorMCPTool } from '../registry/route.js'
import { PerView, type SessionView } from '../sessions/session-view.js'

/** The server's `instructions` for a session (initialize in 2025-06-18, server/discover in 2026-07-28). */
export type ServerInstructions = (view: SessionView) => string

/** A connector as the instructions name it (a connector snapshot is one): only active ones are named. */
export interface DescribedConnector {
  readonly key: string
  readonly name: string
  readonly description: string
  readonly active: boolean
  /** Its Skills (served at skill://<key>/…). */
  readonly skills: readonly unknown[]
}

const PREAMBLE =
  'Tools of the connectors installed in tutti, named <connector>_<tool>, and their Skills at ' +
  'skill://<connector>/<skill>/SKILL.md. The lists change while you run as connectors are installed, connected or ' +
  'removed; `tutti connector available` describes each connector.'

/** A description is one line of the instructions: enough to be found by a tool search, not a page. */
const MAX_DESCRIPTION_CHARS = 200

function line(c: DescribedConnector, tools: number): string {
  const flat = c.description.replace(/\s+/g, ' ').trim()
  const description = flat.length > MAX_DESCRIPTION_CHARS ? `${flat.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : flat
  const what = [tools ? `${tools} tool${tools === 1 ? '' : 's'} named ${c.key}_*` : '', c.skills.length ? 'Skills' : '']
    .filter(Boolean)
    .join(', ')
  const name = c.name && c.name !== c.key ? ` (${c.name})` : ''
  return `- ${c.key}${name}: ${description || 'no description'}${what ? ` [${what}]` : ''}`
}

/**
 * The instructions list the connectors a session sees, a line each, so
 * that a client's own tool search (Claude Code's ToolSearch, Codex's
 * tool_search), which defers tool definitions, can still find a
 * connector's tools by what the connector is for. Kept per tool snapshot
 * and view: a commit makes a new snapshot, and with it new text.
 */
export function serverInstructions(
  connectors: () => readonly DescribedConnector[],
  all: () => readonly ConnectorMCPTool[],
): ServerInstructions {
  const kept = new PerView<string>()
  return (view) => {
    const base = all()
    return kept.get(base, view, () => text(connectors(), view, base))
  }
}

/** A session that sees one connector unprefixed: that connector, under its server's own names. */
function unprefixedText(c: DescribedConnector | undefined, tools: number): string {
  if (!c) return 'This session serves one connector, which is not active now.'
  const what = `${tools} tool${tools === 1 ? '' : 's'}`
  return `The connector ${c.key} (${c.name}), served under its own server's names: ${what}. ${c.description}`
}

function text(connectors: readonly DescribedConnector[], view: SessionView, base: readonly ConnectorMCPTool[]): string {
  if (view.unprefixed !== undefined) {
    const c = connectors.find((d) => d.key === view.unprefixed && d.active)
    return unprefixedText(c, view.tools(base).length)
  }
  const counts = new Map<string, number>()
  for (const tool of view.tools(base)) counts.set(tool.connector, (counts.get(tool.connector) ?? 0) + 1)
  const lines = connectors
    .filter((c) => c.active && view.connector(c.key) && (counts.has(c.key) || c.skills.length > 0))
    .map((c) => line(c, counts.get(c.key) ?? 0))
  return lines.length
    ? `${PREAMBLE}\n\nConnectors:\n${lines.join('\n')}`
    : `${PREAMBLE}\n\nNo connector is active for this session yet.`
}

/** Without a connector directory (tests, a bare endpoint): the preamble alone. */
export const PLAIN_INSTRUCTIONS: ServerInstructions = () => PREAMBLE
