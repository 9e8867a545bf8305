import type { HeaderLookup } from '../http-surface/header-lookup.js'
import { decodeHeaderValue } from '../mcp-wire.js'
import type { HeaderParam } from '../registry/route.js'

/**
 * `Mcp-Param-<Name>` checks for a modern tools/call (MCP 2026-07-28,
 * SEP-2243). The SDK does this only for its high-level McpServer and does
 * not export the helpers, so the low-level server needs its own: decode the
 * `=?base64?…?=` form, then compare with the value in the body.
 */
export interface ParamHeaderMismatch {
  header: string
  body: string
  problem: 'param-header-missing' | 'param-header-invalid-encoding' | 'param-header-mismatch'
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args
  for (const key of path) {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}

function matches(decoded: string, value: unknown, type: HeaderParam['type']): boolean {
  if (type === 'integer') return decoded.trim() !== '' && Number(decoded) === Number(value)
  if (type === 'boolean') return decoded === String(value)
  return decoded === value
}

export function checkParamHeaders(
  params: readonly HeaderParam[],
  args: unknown,
  headers: HeaderLookup,
): ParamHeaderMismatch | undefined {
  for (const p of params) {
    const value = valueAt(args, p.path)
    if (value === undefined || value === null) continue
    const name = `Mcp-Param-${p.header}`
    const raw = headers.get(name)
    const body = String(value)
    if (raw === null) return { header: name, body, problem: 'param-header-missing' }
    const decoded = decodeHeaderValue(raw)
    if (decoded === undefined) return { header: name, body, problem: 'param-header-invalid-encoding' }
    if (!matches(decoded, value, p.type)) return { header: name, body, problem: 'param-header-mismatch' }
  }
  return undefined
}
