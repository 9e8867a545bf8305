import { classifyInboundRequest, type InboundClassificationOutcome } from '@modelcontextprotocol/server'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { MCPToolBinding } from '../registry/route.js'

export type Era = 'modern' | 'legacy'

/**
 * One MCP request, classified once when it arrives. The guard, the fast path
 * and the SDK handlers all read this; nothing decides the era or resolves
 * the tool a second time.
 */
export interface McpRequest {
  /** undefined: the SDK's validation ladder refuses the request, and the SDK answers it. */
  readonly era: Era | undefined
  readonly method: string | undefined
  /** The registry's tool, for a tools/call naming one; it stays bound for the whole call. */
  readonly binding: MCPToolBinding | undefined
  /** What the SDK's classifier said, in full. */
  readonly outcome: InboundClassificationOutcome
}

/**
 * The era is the SDK's own decision: `classifyInboundRequest` is the step
 * `createMcpHandler` runs on the same headers and the same parsed body, so
 * this classification and the SDK's routing cannot disagree. `body` is a
 * parsed JSON object (the guard has refused anything else).
 */
export function classifyMcpRequest(body: Record<string, unknown>, headers: Headers, registry: ConnectorMCPRegistry): McpRequest {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: headers.get('mcp-protocol-version') ?? undefined,
    mcpMethodHeader: headers.get('mcp-method') ?? undefined,
    mcpNameHeader: headers.get('mcp-name') ?? undefined,
    body,
  })
  const era = outcome.kind === 'reject' ? undefined : outcome.kind
  const method = typeof body.method === 'string' ? body.method : undefined
  const params = body.params as { name?: unknown } | undefined
  const name = method === 'tools/call' && params && typeof params === 'object' ? params.name : undefined
  const binding = era && typeof name === 'string' ? registry.resolve(name) : undefined
  return { era, method, binding, outcome }
}
