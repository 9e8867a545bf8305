import { describe, expect, it } from 'vitest'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import type { RouteClient, UpstreamTool } from '../../src/runtime/registry/route.js'
import { sameTable } from '../../src/runtime/reconcile/same-table.js'

const client: RouteClient = { callTool: async () => ({ content: [] }) }
const tool = (name: string, execution?: unknown): UpstreamTool => ({
  name,
  inputSchema: { type: 'object' },
  ...(execution === undefined ? {} : { execution }),
})
const TOOLS = [
  tool('must', { taskSupport: 'required' }),
  tool('may', { taskSupport: 'optional' }),
  tool('never', { taskSupport: 'forbidden' }),
  tool('odd', { taskSupport: 'sometimes' }),
  tool('plain'),
]

describe("a tool's task support on the route", () => {
  it('is its execution.taskSupport where the upstream serves tasks, and is not served in tools/list', () => {
    const route = buildRoute('fx', 1, client, { tools: TOOLS, features: { tasks: true } })
    const support = Object.fromEntries(route.tools.map((t) => [t.upstreamName, t.taskSupport]))
    expect(support).toEqual({ must: 'required', may: 'optional', never: undefined, odd: undefined, plain: undefined })
    expect(route.tools.every((t) => !t.json.includes('execution'))).toBe(true)
  })

  it('is none where the upstream declared no tasks (its execution is not believed)', () => {
    const route = buildRoute('fx', 1, client, { tools: TOOLS, features: {} })
    expect(route.tools.filter((t) => t.taskSupport)).toEqual([])
  })

  it('a change of it alone is a different table (a lazy start then commits the upstream one)', () => {
    const before = { tools: [tool('must', { taskSupport: 'optional' })], features: { tasks: true as const } }
    const after = { tools: [tool('must', { taskSupport: 'required' })], features: { tasks: true as const } }
    expect(sameTable(before, before, 'fx')).toBe(true)
    expect(sameTable(before, after, 'fx')).toBe(false)
  })
})
