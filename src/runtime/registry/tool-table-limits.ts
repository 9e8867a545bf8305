/**
 * What one connector's tool table may hold. A table past any of these is
 * refused before the registry changes any state: a single bad connector must
 * never be able to break `tools/list` for every session (a schema nested
 * 10,000 levels deep makes JSON.stringify and schema validators overflow
 * the stack).
 */
export const TOOL_TABLE_LIMITS = {
  /** Nesting of objects and arrays in one tool's schemas and annotations; real schemas stay under 20. */
  maxSchemaDepth: 64,
  /** One tool as served in tools/list (name, description, schemas, annotations). */
  maxToolBytes: 256 * 1024,
  /** One connector's whole table as served: it is part of every tools/list of every session. */
  maxTableBytes: 8 * 1024 * 1024,
  /** Tools of one connector. */
  maxTools: 5_000,
} as const

/** Whether `value` nests objects/arrays deeper than `max` levels; iterative, so it cannot overflow itself. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }]
  while (stack.length) {
    const { node, depth } = stack.pop()!
    if (!node || typeof node !== 'object') continue
    if (depth >= max) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child && typeof child === 'object') stack.push({ node: child, depth: depth + 1 })
    }
  }
  return false
}
