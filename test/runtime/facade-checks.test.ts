import { describe, expect, it } from 'vitest'
import { checkAvailable, checkDeclared, checkMcpList, checkShims } from '../../src/runtime/doctor/facade-checks.js'
import type { DoctorConnector, DoctorTool } from '../../src/runtime/control-protocol/doctor.js'

const conn = (key: string, extra: Partial<DoctorConnector> = {}): DoctorConnector => ({
  key,
  status: 'ready',
  active: true,
  generation: 1,
  digest: 'a'.repeat(64),
  hasMcp: true,
  hasCli: true,
  shimGeneration: 1,
  upstreamRunning: true,
  skills: [],
  ...extra,
})
const tool = (connector: string, name: string, schema: Record<string, unknown> = { type: 'object' }): DoctorTool => ({
  localName: `${connector}_${name}`,
  connector,
  generation: 1,
  inputSchema: schema,
})

describe('facade checks', () => {
  it('MCP tools/list must carry exactly the registry tools with the same schemas and descriptions', () => {
    const registry = [tool('a', 'x', { type: 'object', properties: { q: { type: 'string' } } }), tool('a', 'y')]
    expect(
      checkMcpList(
        'mcp-2026-07-28',
        [
          { name: 'a_x', inputSchema: { properties: { q: { type: 'string' } }, type: 'object' } },
          { name: 'a_y', inputSchema: { type: 'object' } },
        ],
        registry,
      ),
    ).toEqual([])
    const drift = checkMcpList(
      'mcp-2025-06-18',
      [
        { name: 'a_x', inputSchema: { type: 'object' } },
        { name: 'b_z', inputSchema: { type: 'object' } },
      ],
      registry,
    )
    expect(drift.map((f) => f.problem)).toEqual([
      'tool "a_x": tools/list schema differs from the registry',
      'tool "a_y" is in the registry but not in tools/list',
      'tools/list has "b_z", which the registry does not route',
    ])
    expect(checkMcpList('mcp-2026-07-28', { error: 'ECONNREFUSED' }, registry)[0]!.problem).toMatch(
      /tools\/list failed: ECONNREFUSED/,
    )
  })

  it('available must list what the registry routes, with the right prefix', () => {
    const available = {
      connectors: [
        {
          key: 'a',
          name: 'A',
          description: '',
          skills: [],
          interfaces: [
            { kind: 'mcp' as const, serverName: 'connector' as const, toolPrefix: 'a_', status: 'ready' as const },
          ],
        },
      ],
    }
    expect(checkAvailable(available, [conn('a')], [tool('a', 'x')])).toEqual([])
    const f = checkAvailable(
      available,
      [conn('a'), conn('b', { active: false, status: 'needs-auth' })],
      [tool('a', 'x'), tool('b', 'y')],
    )
    expect(f.map((x) => x.problem)).toEqual([
      'the registry serves its tools but `connector available` does not list it',
      'tools are routed while the connector is needs-auth',
    ])
    const unrouted = checkAvailable(available, [conn('a', { generation: 0 })], [])
    expect(unrouted.map((x) => x.problem)).toEqual(['reported ready but no route generation is committed'])
  })

  it('shims: missing, partial, stale, pinned to another release, stray', () => {
    const files = (k: string) => [`tutti-connector-${k}`, `tutti-connector-${k}.cmd`, `tutti-connector-${k}.ps1`]
    const ok = {
      key: 'a',
      files: files('a'),
      generation: 1,
      pinnedDigest: 'a'.repeat(64),
      path: '/bin/tutti-connector-a',
    }
    expect(checkShims([conn('a')], [ok])).toEqual([])
    expect(checkShims([conn('a')], [{ ...ok, files: files('a').slice(0, 2) }])[0]!.problem).toBe(
      'tutti-connector-a lacks .ps1',
    )
    expect(checkShims([conn('a')], [{ ...ok, generation: 0 }])[0]!.problem).toBe('the shim runs generation 0, not 1')
    expect(checkShims([conn('a')], [{ ...ok, pinnedDigest: 'b'.repeat(64) }])[0]!.problem).toBe(
      'the shim pins another release than the installed one',
    )
    expect(checkShims([conn('a', { hasCli: false })], [ok])[0]!.problem).toMatch(/stray shim/)
    expect(checkShims([conn('a')], [])[0]!.problem).toBe('tutti-connector-a is missing from the bin dir')
  })

  it('declared tools: each difference is named, with the field', () => {
    const f = checkDeclared([
      conn('a', {
        declaredCheck: {
          checkedAt: 'now',
          differences: [{ tool: 'x', problem: 'fields differ', fields: ['inputSchema'] }],
        },
      }),
    ])
    expect(f).toEqual([
      expect.objectContaining({
        check: 'declared-tools',
        connector: 'a',
        problem: expect.stringContaining('x (fields differ: inputSchema)'),
      }),
    ])
  })
})
