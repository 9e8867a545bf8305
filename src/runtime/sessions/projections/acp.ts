import type { AcpProjection, MCPServerBinding } from '../prepared-runtime.js'

/**
 * ACP agents take MCP servers in `session/new` / `session/load`. Only an
 * agent whose initialize response declares
 * `agentCapabilities.mcpCapabilities.http === true` gets the connector
 * server; anything else (false, missing, unreadable) gets a plain session.
 */
export function acpSupportsHttp(initializeResponse: unknown): { ok: true } | { ok: false; reason: string } {
  const root = initializeResponse as { result?: unknown } | undefined
  // accept the bare result or a whole JSON-RPC response
  const result = (root && typeof root === 'object' && 'result' in root ? root.result : root) as { agentCapabilities?: { mcpCapabilities?: { http?: unknown } } } | undefined
  if (!result || typeof result !== 'object') return { ok: false, reason: 'the agent initialize response is missing or not an object' }
  const http = result.agentCapabilities?.mcpCapabilities?.http
  if (http === true) return { ok: true }
  return { ok: false, reason: http === false ? 'the agent declares mcpCapabilities.http = false' : 'the agent does not declare mcpCapabilities.http' }
}

export function projectAcp(servers: readonly MCPServerBinding[]): AcpProjection {
  return {
    kind: 'acp',
    mcpServers: servers.map((s) => ({ type: 'http', name: s.name, url: s.url, headers: Object.entries(s.headers).map(([name, value]) => ({ name, value })) })),
    connectors: { attached: true },
  }
}

export function plainAcp(reason: string): AcpProjection {
  return { kind: 'acp', mcpServers: [], connectors: { attached: false, reason } }
}
