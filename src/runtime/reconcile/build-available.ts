import { SERVER_NAME, shimCommand, toolPrefix } from '../names.js'
import type { AvailableConnector, AvailableResult } from '../control-protocol/available.js'
import type { ConnectorSnapshot } from './connector-snapshot.js'

export { shimCommand, toolPrefix }

/** Reasons are for a person at a glance; the whole story is in `daemon status` and the log. */
export const MAX_REASON_CHARS = 300

function shortReason(reason: string | undefined, scrub: (text: string) => string): { reason?: string } {
  if (!reason) return {}
  const flat = scrub(reason).replace(/\s+/g, ' ').trim()
  return { reason: flat.length > MAX_REASON_CHARS ? `${flat.slice(0, MAX_REASON_CHARS - 1)}…` : flat }
}

/**
 * The `connector available` view, a pure function of the connector
 * snapshots. Built only from names, descriptions, statuses and reasons
 * (which `scrub` cleans of secrets and paths): nothing here shows a URL,
 * port, token, credential or path.
 */
export function buildAvailable(
  snapshots: readonly ConnectorSnapshot[],
  scrub: (text: string) => string = (t) => t,
): AvailableResult {
  const connectors = [...snapshots]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((s): AvailableConnector => {
      const interfaces: AvailableConnector['interfaces'] = []
      if (s.mcp && s.releaseRoot) {
        // the context cost is known once a table was committed (declared, cached or listed)
        const hidden = s.hiddenTools ? { hiddenTools: s.hiddenTools } : {}
        const cost = s.active && s.generation > 0 ? { tools: s.tools, schemaBytes: s.toolBytes, ...hidden } : {}
        // a ready one's reason says which release serves while a change of it failed
        const { status, reason } = s.mcp
        const prefix = toolPrefix(s.key)
        const mcp = { kind: 'mcp' as const, serverName: SERVER_NAME as typeof SERVER_NAME, toolPrefix: prefix, status }
        interfaces.push({ ...mcp, ...shortReason(reason, scrub), ...cost })
      }
      if (s.cli)
        interfaces.push({
          kind: 'cli',
          command: shimCommand(s.key),
          status: s.cli.status,
          ...(s.cli.status !== 'ready' ? shortReason(s.cli.reason, scrub) : {}),
        })
      return {
        key: s.key,
        name: s.name,
        description: s.description,
        skills: s.skills.map((k) =>
          k.title
            ? { name: k.name, title: k.title, description: k.description }
            : { name: k.name, description: k.description },
        ),
        interfaces,
      }
    })
  return { connectors }
}
