import { expect, it } from 'vitest'
import { compareToolTables } from '../../src/runtime/registry/declared-tools.js'

it('compares declared and upstream tool tables field by field, ignoring key order', () => {
  const declared = [
    { name: 'a', description: 'A', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } },
    { name: 'b', description: 'B', inputSchema: { type: 'object' } },
    { name: 'gone', inputSchema: { type: 'object' } },
  ]
  const upstream = [
    { name: 'a', description: 'A', inputSchema: { properties: { x: { type: 'string' } }, type: 'object' } },
    { name: 'b', description: 'B changed', inputSchema: { type: 'object', required: [] } },
    { name: 'new', inputSchema: { type: 'object' } },
  ]
  expect(compareToolTables(declared, upstream)).toEqual([
    { tool: 'b', problem: 'fields differ', fields: ['description', 'inputSchema'] },
    { tool: 'gone', problem: 'declared but not listed by the upstream' },
    { tool: 'new', problem: 'listed by the upstream but not declared' },
  ])
  expect(compareToolTables(declared, declared)).toEqual([])
})
