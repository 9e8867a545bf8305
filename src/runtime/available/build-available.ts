import type { LoadedRelease } from '../manifest/load.js'
import type { AvailableConnector, AvailableResult } from '../protocol/available.js'
import type { InterfaceStatus } from '../protocol/connector-state.js'

export interface AvailableInput {
  key: string
  name: string
  release?: LoadedRelease
  mcpStatus: InterfaceStatus
  cliStatus: InterfaceStatus
  mcpReason?: string
  cliReason?: string
}

/** Reasons are for a person at a glance; the whole story is in `daemon status` and the log. */
export const MAX_REASON_CHARS = 300

function shortReason(reason: string | undefined): { reason?: string } {
  if (!reason) return {}
  const flat = reason.replace(/\s+/g, ' ').trim()
  return { reason: flat.length > MAX_REASON_CHARS ? `${flat.slice(0, MAX_REASON_CHARS - 1)}…` : flat }
}

export const shimCommand = (key: string): string => `tutti-connector-${key}`
export const toolPrefix = (key: string): string => `${key}_`

/**
 * The `connector available` view. Built only from names, descriptions and
 * statuses: nothing here knows a URL, port, token, credential or path.
 */
export function buildAvailable(inputs: readonly AvailableInput[]): AvailableResult {
  const connectors = [...inputs]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((input): AvailableConnector => {
      const m = input.release?.manifest
      const interfaces: AvailableConnector['interfaces'] = []
      if (m?.mcp) interfaces.push({ kind: 'mcp', serverName: 'connector', toolPrefix: toolPrefix(input.key), status: input.mcpStatus, ...(input.mcpStatus !== 'ready' ? shortReason(input.mcpReason) : {}) })
      if (m?.cli) interfaces.push({ kind: 'cli', command: shimCommand(input.key), status: input.cliStatus, ...(input.cliStatus !== 'ready' ? shortReason(input.cliReason) : {}) })
      return {
        key: input.key,
        name: m?.name ?? input.name,
        description: m?.description ?? '',
        skills: (input.release?.skills ?? []).map((s) => (s.title ? { name: s.name, title: s.title, description: s.description } : { name: s.name, description: s.description })),
        interfaces,
      }
    })
  return { connectors }
}
