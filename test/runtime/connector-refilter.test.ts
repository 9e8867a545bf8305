import { describe, expect, it } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { parseManifest } from '../../src/runtime/manifest/load.js'
import { ConnectorRuntime } from '../../src/runtime/reconcile/connector-runtime.js'
import type { DesiredConnector } from '../../src/runtime/reconcile/desired-connector.js'
import { ShimKeeper } from '../../src/runtime/reconcile/shim-keeper.js'
import { KeyedWorkQueue } from '../../src/runtime/reconcile/work-queue.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { UpstreamTool } from '../../src/runtime/registry/route.js'
import type { UpstreamTable } from '../../src/runtime/registry/route.js'
import type { ShimPublisher } from '../../src/runtime/shims/shim-publisher.js'
import { FakeDialer, tool } from '../support/fake-upstream.js'

// A new tool filter is the same desired state (the spec hash leaves it out): the runtime builds the
// table it serves again with the filter and commits it as the next generation, with no dial, no list
// and no tool-cache write.

const shims = {
  publish: async () => undefined,
  publishedGeneration: async () => undefined,
  remove: async () => false,
} as unknown as ShimPublisher

function desired(activation: 'eager' | undefined, filter?: { allow?: string[]; hide?: string[] }): DesiredConnector {
  const mcp = { transport: 'stdio', command: 'node', ...(activation ? { activation } : {}) }
  const manifest = parseManifest(JSON.stringify({ schemaVersion: 1, key: 'fx', name: 'Fx', version: '1.0.0', mcp }))
  return {
    release: { root: '/releases/fx', manifest, skills: [], entries: [] },
    digest: '1'.repeat(64),
    spec: { kind: 'stdio', key: 'fx', command: '/bin/node', args: [], cwd: '/releases/fx', env: {} },
    ...(filter ? { filter, toolFilter: { allow: filter.allow, hide: filter.hide, from: { tools: 'user' } } } : {}),
  }
}

function harness(cached = new Map<string, readonly UpstreamTool[]>()) {
  const registry = new ConnectorMCPRegistry()
  const dialer = new FakeDialer()
  dialer.fallback = [tool('a'), tool('b'), tool('c')]
  const log = createLogger(memorySink([]))
  const queue = new KeyedWorkQueue(4, log)
  const puts: Array<readonly UpstreamTool[]> = []
  const cache = {
    get: async (_key: string, spec: string) => {
      const tools = cached.get(spec)
      return tools && { tools: [...tools] }
    },
    put: async (_key: string, spec: string, table: UpstreamTable) => {
      puts.push(table.tools)
      cached.set(spec, table.tools)
    },
  }
  const runtime = new ConnectorRuntime('fx', {
    registry,
    shims: new ShimKeeper(shims, log),
    log,
    enqueue: (work) => queue.enqueue('fx', work),
    openUpstream: dialer.open,
    cache,
  })
  const names = () => registry.list().map((t) => t.localName)
  return { registry, dialer, runtime, puts, names, cached }
}

describe('a new tool filter commits the table again, without a restart', () => {
  it('eager: the running upstream serves on; the whole table stays known', async () => {
    const { registry, dialer, runtime, puts, names } = harness()
    await runtime.apply(desired('eager'))
    expect(names()).toEqual(['fx_a', 'fx_b', 'fx_c'])
    const upstream = dialer.last
    await runtime.apply(desired('eager', { hide: ['b'] }))
    expect(names()).toEqual(['fx_a', 'fx_c'])
    expect(registry.route('fx')).toMatchObject({ generation: 2, hidden: [{ upstreamName: 'b', localName: 'fx_b' }] })
    expect(dialer.specs).toHaveLength(1)
    expect(dialer.last).toBe(upstream)
    expect(puts).toHaveLength(1)
    expect(runtime.table?.map((t) => t.name)).toEqual(['a', 'b', 'c'])
    expect(runtime.snapshot()).toMatchObject({ generation: 2, tools: 2, hiddenTools: 1 })
    // the same filter again changes nothing
    await runtime.apply(desired('eager', { hide: ['b'] }))
    expect(registry.route('fx')?.generation).toBe(2)
    await runtime.dispose()
  })

  it('lazy by cache: a start from the cache and a refilter start no process and write no cache', async () => {
    const first = harness()
    await first.runtime.apply(desired(undefined))
    expect(first.dialer.specs).toHaveLength(1)
    await first.runtime.dispose()
    // a daemon start: the cached table is published, then the filter changes
    const { dialer, runtime, puts, names } = harness(first.cached)
    await runtime.apply(desired(undefined))
    expect(names()).toEqual(['fx_a', 'fx_b', 'fx_c'])
    await runtime.apply(desired(undefined, { allow: ['c', 'gone'] }))
    expect(names()).toEqual(['fx_c'])
    expect(dialer.specs).toHaveLength(0)
    expect(puts).toHaveLength(0)
    expect(runtime.snapshot()?.toolFilter).toEqual({
      allow: ['c', 'gone'],
      from: { tools: 'user' },
      unmatched: ['gone'],
    })
    await runtime.dispose()
  })

  it('a connector without an upstream has no table to check names against', async () => {
    const { runtime } = harness()
    await runtime.apply({ ...desired('eager'), spec: undefined })
    expect(runtime.table).toBeUndefined()
  })
})
