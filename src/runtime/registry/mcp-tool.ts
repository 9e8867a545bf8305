import { TOOL_META } from '../mcp-wire.js'
import type { ConnectorMCPTool } from './route.js'

/** A tool as `tools/list` serves it, in both eras (the wire shape is the same). */
export function toMcpTool(t: Omit<ConnectorMCPTool, 'json'>): { name: string; inputSchema: { type: 'object' } } {
  const tool: Record<string, unknown> = { name: t.localName, inputSchema: t.inputSchema }
  if (t.title !== undefined) tool.title = t.title
  if (t.description !== undefined) tool.description = t.description
  if (t.outputSchema !== undefined) tool.outputSchema = t.outputSchema
  if (t.annotations !== undefined) tool.annotations = t.annotations
  if (t.meta !== undefined || t.alwaysLoad)
    tool._meta = { ...t.meta, ...(t.alwaysLoad ? { [TOOL_META.alwaysLoad]: true } : {}) }
  return tool as { name: string; inputSchema: { type: 'object' } }
}
