import { describe, expect, it } from 'vitest'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { RouteClient, UpstreamTool } from '../../src/runtime/registry/route.js'
import { localToolName, MAX_LOCAL_NAME, publishedToolNames } from '../../src/runtime/registry/tool-naming.js'

const client = (label: string): RouteClient => ({
  callTool: async () => ({ content: [{ type: 'text', text: label }] }),
})
const tool = (name: string, extra: Partial<UpstreamTool> = {}): UpstreamTool => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object' },
  ...extra,
})
const route = (key: string, generation: number, names: string[], label = `${key}@${generation}`) =>
  buildRoute(
    key,
    generation,
    client(label),
    names.map((n) => tool(n)),
  )

function recorder(reg: ConnectorMCPRegistry) {
  const events: string[][] = []
  reg.onChange((c) => events.push(c.connectors))
  return events
}

describe('ConnectorMCPRegistry', () => {
  it('add: tools appear as <key>_<tool>, sorted', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('notes', 1, ['search', 'add']))
    reg.commit(route('alpha', 1, ['z']))
    expect(reg.list().map((t) => t.localName)).toEqual(['alpha_z', 'notes_add', 'notes_search'])
    expect(reg.resolve('notes_add')).toMatchObject({
      connectorKey: 'notes',
      generation: 1,
      tool: { upstreamName: 'add' },
    })
  })

  it('atomic swap: the new generation replaces the whole tool set, no empty window', async () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 1, ['a', 'b']))
    const seen: string[][] = []
    reg.onChange(() => seen.push(reg.list().map((t) => t.localName)))
    reg.commit(route('gh', 2, ['b', 'c']))
    expect(seen).toEqual([['gh_b', 'gh_c']])
    expect(reg.resolve('gh_a')).toBeUndefined()
    const b = reg.resolve('gh_b')!
    expect(b.generation).toBe(2)
    expect(await b.client.callTool('b', {}, {})).toEqual({ content: [{ type: 'text', text: 'gh@2' }] })
  })

  it('a stale generation (at or below the fence) is refused and changes nothing', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 3, ['a']))
    expect(() => reg.commit(route('gh', 3, ['x']))).toThrow(/generation 3 is at or below the fence 3/)
    expect(() => reg.commit(route('gh', 2, ['x']))).toThrow(/STALE|fence/)
    expect(reg.list().map((t) => t.localName)).toEqual(['gh_a'])
    expect(reg.nextGeneration('gh')).toBe(4)
  })

  it('remove fences: a later commit of the removed generation is refused', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 1, ['a']))
    expect(reg.remove('gh', 1)).toEqual({ removed: true, changed: true })
    expect(reg.list()).toEqual([])
    expect(() => reg.commit(route('gh', 1, ['a']))).toThrow(/fence/)
    reg.commit(route('gh', 2, ['a']))
    expect(reg.list()).toHaveLength(1)
  })

  it('removing an absent route still advances the fence (no stale resurrection)', () => {
    const reg = new ConnectorMCPRegistry()
    expect(reg.remove('ghost', 5)).toEqual({ removed: false, changed: false })
    expect(reg.fence('ghost')).toBe(5)
    expect(() => reg.commit(route('ghost', 4, ['a']))).toThrow(/fence 5/)
    expect(reg.nextGeneration('ghost')).toBe(6)
  })

  it('remove of an older generation leaves a newer route alone', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 2, ['a']))
    expect(reg.remove('gh', 1)).toEqual({ removed: false, changed: false })
    expect(reg.list()).toHaveLength(1)
  })

  it('emits change events only when the visible list really changed', () => {
    const reg = new ConnectorMCPRegistry()
    const events = recorder(reg)
    reg.commit(route('gh', 1, ['a', 'b']))
    reg.commit(route('gh', 2, ['b', 'a'])) // same tools, new generation (e.g. a restart)
    reg.commit(buildRoute('gh', 3, client('x'), [tool('a'), tool('b', { description: 'changed' })]))
    reg.remove('other', 1)
    reg.remove('gh', 3)
    reg.remove('gh', 4)
    expect(events).toEqual([['gh'], ['gh'], ['gh']])
  })

  it('a conflict rejects the new generation and keeps the old route', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 1, ['a.b']))
    expect(() => reg.commit(buildRoute('gh', 2, client('x'), [tool('a.b'), tool('a_b')]))).toThrow(
      /tools "a\.b" and "a_b" both become "gh_a_b"/,
    )
    expect(reg.list().map((t) => [t.localName, t.upstreamName])).toEqual([['gh_a_b', 'a.b']])
    expect(reg.resolve('gh_a_b')?.generation).toBe(1)
  })

  it('schemas are kept verbatim; the root must be an object', () => {
    const schema = {
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' } },
      required: ['when'],
      additionalProperties: false,
      $defs: { x: { const: 1 } },
      'x-vendor': true,
    }
    const r = buildRoute('cal', 1, client('c'), [
      tool('add', { inputSchema: schema, outputSchema: { type: 'object', properties: {} } }),
    ])
    expect(r.tools[0]!.inputSchema).toEqual(schema)
    expect(() => buildRoute('cal', 1, client('c'), [tool('bad', { inputSchema: { type: 'array' } })])).toThrow(
      /root of inputSchema must be type "object"/,
    )
    expect(() => buildRoute('cal', 1, client('c'), [tool('bad', { inputSchema: undefined })])).toThrow(/inputSchema/)
  })

  it('x-mcp-header declarations are validated at registration; invalid tools are dropped with the reason', () => {
    const ok = buildRoute('k', 1, client('c'), [
      tool('t', {
        inputSchema: {
          type: 'object',
          properties: {
            region: { type: 'string', 'x-mcp-header': 'Region' },
            opts: { type: 'object', properties: { n: { type: 'integer', 'x-mcp-header': 'N' } } },
          },
        },
      }),
    ])
    expect(ok.tools[0]!.headerParams).toEqual([
      { path: ['region'], header: 'Region', type: 'string' },
      { path: ['opts', 'n'], header: 'N', type: 'integer' },
    ])
    const dropped = (props: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      buildRoute('k', 1, client('c'), [
        tool('bad', { inputSchema: { type: 'object', properties: props, ...extra } }),
        tool('good'),
      ])
    const cases: Array<[Record<string, unknown>, RegExp, Record<string, unknown>?]> = [
      [{ a: { type: 'object', 'x-mcp-header': 'A' } }, /needs a string, integer or boolean/],
      [{ a: { type: 'number', 'x-mcp-header': 'A' } }, /needs a string, integer or boolean/],
      [{ a: { type: 'string', 'x-mcp-header': 'Bad Header' } }, /not a valid header name/],
      [{ a: { type: 'string', 'x-mcp-header': '' } }, /not a valid header name/],
      [{ a: { type: 'string', 'x-mcp-header': 'Région' } }, /not a valid header name/],
      [{ a: { type: 'string', 'x-mcp-header': 'X' }, b: { type: 'string', 'x-mcp-header': 'x' } }, /declared twice/],
      [{ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }, /not reachable/],
      [{}, /not reachable/, { oneOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }] }],
    ]
    for (const [props, reason, extra] of cases) {
      const r = dropped(props, extra)
      expect(r.tools.map((t) => t.upstreamName)).toEqual(['good'])
      expect(r.dropped).toEqual([{ name: 'bad', reason: expect.stringMatching(reason) }])
    }
  })

  it('a binding fenced by a removal before dispatch gets an error naming the change; a swap does not fence', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 1, ['a']))
    const old = reg.resolve('gh_a')!
    reg.commit(route('gh', 2, ['a']))
    expect(() => reg.assertDispatchable(old)).not.toThrow()
    const current = reg.resolve('gh_a')!
    reg.remove('gh', 2)
    expect(() => reg.assertDispatchable(current)).toThrow(
      /tool "gh_a" is no longer available: connector "gh" was removed \(generation 2 fenced\)/,
    )
    expect(() => reg.assertDispatchable(old)).toThrow(/generation 1 fenced/)
  })

  it('bindings are immutable snapshots', () => {
    const reg = new ConnectorMCPRegistry()
    reg.commit(route('gh', 1, ['a']))
    const b = reg.resolve('gh_a')!
    expect(Object.isFrozen(b)).toBe(true)
    expect(() => {
      ;(b as { generation: number }).generation = 9
    }).toThrow()
  })
})

describe('local tool names', () => {
  it('plain names are <key>_<tool>', () => {
    expect(localToolName('github', 'search_issues')).toBe('github_search_issues')
  })
  it('dotted, spaced and unicode names become [A-Za-z0-9_-]', () => {
    expect(localToolName('k', 'files.read')).toBe('k_files_read')
    expect(localToolName('k', 'über größe')).toBe('k__ber_gr__e')
    expect(localToolName('k', 'emoji🙂x')).toBe('k_emoji_x')
  })
  it('long names are cut with a hash of the upstream name, deterministically, within 48', () => {
    const long = 'a'.repeat(80)
    const name = localToolName('connector-key', long)
    expect(name.length).toBe(MAX_LOCAL_NAME)
    expect(name).toMatch(/^connector-key_a+_[0-9a-f]{8}$/)
    expect(localToolName('connector-key', long)).toBe(name)
    expect(localToolName('connector-key', `${'a'.repeat(79)}b`)).not.toBe(name)
    for (const n of [name, localToolName('k'.repeat(24), 'x'.repeat(100))]) expect(n).toMatch(/^[A-Za-z0-9_-]{1,48}$/)
  })
  it('colliding long names still differ by their hash', () => {
    const a = localToolName('k', `${'x'.repeat(60)}-one`)
    const b = localToolName('k', `${'x'.repeat(60)}-two`)
    expect(a).not.toBe(b)
    expect(a.slice(0, 39)).toBe(b.slice(0, 39))
  })
})

describe('publishedToolNames', () => {
  it('strips a doubled prefix only where the name is free; every other name is the plain one', () => {
    const names = publishedToolNames('git', ['git_status', 'status', 'git_log', 'git_', 'gitlog', 'git.diff'])
    expect(Object.fromEntries(names)).toEqual({
      git_status: 'git_git_status',
      status: 'git_status',
      git_log: 'git_log',
      git_: 'git_git_',
      gitlog: 'git_gitlog',
      // the prefix is looked for after invalid characters became "_"
      'git.diff': 'git_diff',
    })
    for (const [upstream, local] of publishedToolNames('k', ['a', 'k_b'])) {
      if (upstream === 'a') expect(local).toBe(localToolName('k', 'a'))
    }
    const long = `k_${'x'.repeat(80)}`
    const fitted = publishedToolNames('k', [long]).get(long)!
    expect(fitted.length).toBeLessThanOrEqual(MAX_LOCAL_NAME)
    expect(fitted.startsWith('k_xxx')).toBe(true)
  })
})
