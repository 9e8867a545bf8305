import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import type { LoadedRelease } from '../../src/runtime/manifest/load.js'
import { parseManifest } from '../../src/runtime/manifest/load.js'
import { WITHDRAW_AFTER_FAILURES } from '../../src/runtime/reconcile/activation-plan.js'
import { ConnectorRuntime } from '../../src/runtime/reconcile/connector-runtime.js'
import type { DesiredConnector } from '../../src/runtime/reconcile/desired-connector.js'
import { KeyedWorkQueue } from '../../src/runtime/reconcile/work-queue.js'
import { ShimKeeper } from '../../src/runtime/reconcile/shim-keeper.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { ShimPublisher } from '../../src/runtime/shims/shim-publisher.js'
import { BACKOFF } from '../../src/runtime/upstream/backoff.js'
import type { UpstreamTool } from '../../src/runtime/registry/route.js'
import type { UpstreamTable } from '../../src/runtime/registry/route.js'
import type { UpstreamSpec } from '../../src/runtime/upstream/upstream-spec.js'
import { FakeDialer, tool } from '../support/fake-upstream.js'

/** A shim publisher that keeps its "files" in memory. */
function memoryShims() {
  const onDisk = new Map<string, number>()
  const publisher = {
    publish: async (pin: { key: string; generation: number }) => void onDisk.set(pin.key, pin.generation),
    publishedGeneration: async (key: string) => onDisk.get(key),
    remove: async (key: string, generation: number) => (onDisk.get(key) === generation ? onDisk.delete(key) : false),
  } as unknown as ShimPublisher
  return { onDisk, publisher }
}

function release(manifest: Record<string, unknown>): LoadedRelease {
  const m = parseManifest(JSON.stringify({ schemaVersion: 1, key: 'fx', name: 'Fx', version: '1.0.0', ...manifest }))
  return { root: '/releases/fx', manifest: m, skills: [], entries: [] }
}

const eager = (version = '1.0.0', extra: Record<string, unknown> = {}): DesiredConnector => ({
  release: release({
    version,
    mcp: { transport: 'stdio', command: 'node', activation: 'eager' },
    cli: { entrypoint: 'cli.js' },
    ...extra,
  }),
  digest: version.padEnd(64, '0'),
  spec: { kind: 'stdio', key: 'fx', command: '/bin/node', args: [version], cwd: '/releases/fx', env: {} },
})

/** A tool cache in memory, keyed like the real one by connector and desired state. */
function memoryCache() {
  const entries = new Map<string, readonly UpstreamTool[]>()
  return {
    entries,
    // the tools of a table are what these tests look at; a table of tools alone round-trips as it was
    get: async (key: string, spec: string) => {
      const tools = entries.get(`${key}/${spec}`)
      return tools && { tools: [...tools] }
    },
    put: async (key: string, spec: string, table: UpstreamTable) => void entries.set(`${key}/${spec}`, table.tools),
  }
}

function harness() {
  const cache = memoryCache()
  const registry = new ConnectorMCPRegistry()
  const dialer = new FakeDialer()
  const shims = memoryShims()
  const log = createLogger(memorySink([]))
  const queue = new KeyedWorkQueue(4, log)
  const make = () =>
    new ConnectorRuntime('fx', {
      registry,
      shims: new ShimKeeper(shims.publisher, log),
      log,
      enqueue: (work) => queue.enqueue('fx', work),
      openUpstream: dialer.open,
      cache,
    })
  const runtime = make()
  // let the queue drain: work the supervisor's events enqueued
  const drained = () => queue.enqueue('fx', async () => {})
  return { registry, dialer, shims, runtime, drained, cache, make }
}

describe('ConnectorRuntime', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('apply commits the upstream table as generation 1 and publishes the shim with it', async () => {
    const { registry, dialer, shims, runtime } = harness()
    dialer.fallback = [tool('a'), tool('b')]
    await runtime.apply(eager())
    expect(registry.list().map((t) => t.localName)).toEqual(['fx_a', 'fx_b'])
    expect(runtime.snapshot()).toMatchObject({
      generation: 1,
      tools: 2,
      mcp: { status: 'ready' },
      cli: { status: 'ready', shimGeneration: 1 },
    })
    expect(shims.onDisk.get('fx')).toBe(1)
  })

  it('a failed first start: failed with the reason, no tools, but the CLI shim is published', async () => {
    const { registry, dialer, shims, runtime } = harness()
    dialer.script.push(new Error('command "/bin/node" not found'))
    await runtime.apply(eager())
    expect(runtime.snapshot()).toMatchObject({
      generation: 0,
      mcp: { status: 'failed', reason: 'command "/bin/node" not found' },
      cli: { status: 'ready' },
      upstream: { nextRetryAt: expect.any(String) },
    })
    expect(registry.list()).toEqual([])
    expect(shims.onDisk.get('fx')).toBe(1)
  })

  it(
    'an upgrade that cannot start leaves the previous generation serving; when it starts later, it is committed ' +
      'and the old upstream retired',
    async () => {
      const { registry, dialer, runtime, drained } = harness()
      dialer.fallback = [tool('a')]
      await runtime.apply(eager('1.0.0'))
      const first = dialer.last
      dialer.script.push(new Error('exited with code 1 before it answered initialize'))
      await runtime.apply(eager('2.0.0'))
      // never failed while serving: ready, saying which release serves and why the new one does not
      const failedChange = {
        servingVersion: '1.0.0',
        version: '2.0.0',
        reason: 'exited with code 1 before it answered initialize',
      }
      const reason = '1.0.0 serving; 2.0.0 failed: exited with code 1 before it answered initialize'
      expect(runtime.snapshot()).toMatchObject({
        version: '2.0.0',
        generation: 1,
        mcp: { status: 'ready', reason, failedChange },
      })
      expect(registry.resolve('fx_a')?.generation).toBe(1)
      expect(first.closed).toBe(false)
      dialer.fallback = [tool('a'), tool('b')]
      await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
      await drained()
      expect(runtime.snapshot()).toMatchObject({ generation: 2, tools: 2, mcp: { status: 'ready' } })
      expect(first.closed).toBe(true)
    },
  )

  it(
    'a changed credential that cannot start withdraws the tools ' + 'and closes the upstream that had the old value',
    async () => {
      const { registry, dialer, runtime, drained } = harness()
      dialer.fallback = [tool('a')]
      await runtime.apply({ ...eager('1.0.0'), values: 'old' })
      const first = dialer.last
      const visible: number[] = []
      registry.onChange(() => visible.push(registry.list().length))
      dialer.script.push(new Error('exited with code 5 before it answered initialize'))
      const changed = eager('1.0.0')
      await runtime.apply({
        ...changed,
        spec: { ...(changed.spec as Extract<UpstreamSpec, { kind: 'stdio' }>), env: { TOKEN: 'new' } },
        values: 'new',
      })
      expect(runtime.snapshot()).toMatchObject({
        generation: 1,
        tools: 0,
        mcp: { status: 'failed', reason: 'exited with code 5 before it answered initialize' },
      })
      expect(runtime.snapshot()?.mcp).not.toHaveProperty('failedChange')
      expect(registry.list()).toEqual([])
      expect(visible).toEqual([0])
      expect(first.closed).toBe(true)
      // the retry of the new value, once it starts, serves again
      await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
      await drained()
      expect(runtime.snapshot()).toMatchObject({ generation: 2, tools: 1, mcp: { status: 'ready' } })
      expect(runtime.snapshot()?.mcp).not.toHaveProperty('reason')
    },
  )

  it(
    'an exit shows starting with the reason; ' + 'the restart commits a new generation on the same supervisor',
    async () => {
      const { dialer, runtime, drained } = harness()
      dialer.fallback = [tool('a')]
      await runtime.apply(eager())
      dialer.last.exit('killed by SIGKILL')
      expect(runtime.snapshot()).toMatchObject({
        mcp: { status: 'starting', reason: 'upstream killed by SIGKILL; restarting' },
      })
      await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
      await drained()
      expect(runtime.snapshot()).toMatchObject({
        generation: 2,
        mcp: { status: 'ready' },
        upstream: { restarts: 1, state: 'running' },
      })
    },
  )

  it(
    `after ${WITHDRAW_AFTER_FAILURES} failed restarts the tools are withdrawn; ` + `a later success brings them back`,
    async () => {
      const { registry, dialer, runtime, drained } = harness()
      dialer.fallback = [tool('a')]
      await runtime.apply(eager())
      const visible: number[] = []
      registry.onChange(() => visible.push(registry.list().length))
      dialer.last.exit()
      for (let i = 0; i < WITHDRAW_AFTER_FAILURES; i++) dialer.script.push(new Error(`still broken ${i}`))
      await vi.advanceTimersByTimeAsync(60_000)
      await drained()
      // withdrawn while it kept failing, back once a restart worked
      expect(visible).toEqual([0, 1])
      expect(registry.list().map((t) => t.localName)).toEqual(['fx_a'])
      expect(runtime.snapshot()).toMatchObject({ mcp: { status: 'ready' } })
    },
  )

  it('an upstream tools/list_changed is committed through the queue as a new generation', async () => {
    const { registry, dialer, runtime, drained } = harness()
    dialer.fallback = [tool('a')]
    await runtime.apply(eager())
    dialer.last.changeTools([tool('a'), tool('grown')])
    await vi.advanceTimersByTimeAsync(100)
    await drained()
    expect(registry.list().map((t) => t.localName)).toEqual(['fx_a', 'fx_grown'])
    expect(runtime.snapshot()?.generation).toBe(2)
  })

  it(
    'lazy: the route comes from the declaration without a dial; ' +
      'a first call whose upstream disagrees gives one new generation',
    async () => {
      const { registry, dialer, runtime, drained } = harness()
      const declared = [tool('a')]
      await runtime.apply(
        eager('1.0.0', { mcp: { transport: 'stdio', command: 'node', activation: 'lazy', tools: declared } }),
      )
      expect(dialer.specs).toHaveLength(0)
      expect(runtime.snapshot()).toMatchObject({
        generation: 1,
        mcp: { status: 'ready', activation: 'lazy' },
        upstream: { state: 'stopped', starts: 0 },
      })
      dialer.fallback = [tool('a'), tool('undeclared')]
      const binding = registry.resolve('fx_a')!
      await Promise.all([binding.client.callTool('a', {}, {}), binding.client.callTool('a', {}, {})])
      await drained()
      expect(dialer.specs).toHaveLength(1)
      expect(runtime.snapshot()).toMatchObject({
        generation: 2,
        declaredCheck: { differences: [expect.objectContaining({ tool: 'undeclared' })] },
      })
    },
  )

  it('deactivate fences the route, withdraws the shim and closes the upstream', async () => {
    const { registry, dialer, shims, runtime } = harness()
    dialer.fallback = [tool('a')]
    await runtime.apply(eager())
    const binding = registry.resolve('fx_a')!
    await runtime.deactivate('needs-auth', 'disconnected')
    expect(registry.list()).toEqual([])
    expect(() => registry.assertDispatchable(binding)).toThrow(/no longer available/)
    expect(shims.onDisk.has('fx')).toBe(false)
    expect(dialer.last.closed).toBe(true)
    expect(runtime.snapshot()).toBeUndefined()
  })

  it('the same desired state again changes nothing, but puts back a shim deleted behind its back', async () => {
    const { registry, dialer, shims, runtime } = harness()
    dialer.fallback = [tool('a')]
    await runtime.apply(eager())
    shims.onDisk.delete('fx')
    await runtime.apply(eager())
    expect(dialer.specs).toHaveLength(1)
    expect(registry.fence('fx')).toBe(1)
    expect(shims.onDisk.get('fx')).toBe(1)
  })

  const cachedMode = (version = '1.0.0'): DesiredConnector => {
    const d = eager(version)
    return {
      ...d,
      release: release({ version, mcp: { transport: 'stdio', command: 'node' }, cli: { entrypoint: 'cli.js' } }),
    }
  }

  it(
    'lazy by cache: the first start lists and remembers the table; ' +
      'the next runtime publishes it without a process',
    async () => {
      const first = harness()
      first.dialer.fallback = [tool('a'), tool('b')]
      await first.runtime.apply(cachedMode())
      expect(first.runtime.snapshot()).toMatchObject({
        generation: 1,
        tools: 2,
        mcp: { status: 'ready', activation: 'cached' },
      })
      expect([...first.cache.entries.values()][0]!.map((t) => t.name)).toEqual(['a', 'b'])
      // a daemon start: same cache, new runtime and registry
      const again = harness()
      for (const [k, v] of first.cache.entries) again.cache.entries.set(k, v)
      await again.runtime.apply(cachedMode())
      expect(again.dialer.specs).toEqual([])
      expect(again.registry.list().map((t) => t.localName)).toEqual(['fx_a', 'fx_b'])
      expect(again.runtime.snapshot()).toMatchObject({
        generation: 1,
        mcp: { status: 'ready' },
        upstream: { state: 'stopped', starts: 0 },
      })
      // the first call starts it; the same table changes nothing
      again.dialer.fallback = [tool('a'), tool('b')]
      await again.registry.resolve('fx_a')!.client.callTool('a', {}, {})
      await again.drained()
      expect(again.dialer.specs).toHaveLength(1)
      expect(again.registry.fence('fx')).toBe(1)
    },
  )

  it(
    'lazy by cache: an upstream that changed since gives exactly one new generation, ' + 'and the cache follows',
    async () => {
      const first = harness()
      first.dialer.fallback = [tool('a')]
      await first.runtime.apply(cachedMode())
      const again = harness()
      for (const [k, v] of first.cache.entries) again.cache.entries.set(k, v)
      await again.runtime.apply(cachedMode())
      const changes: number[] = []
      again.registry.onChange(() => changes.push(again.registry.list().length))
      again.dialer.fallback = [tool('a'), tool('new')]
      await again.registry.resolve('fx_a')!.client.callTool('a', {}, {})
      await again.drained()
      expect(changes).toEqual([2])
      expect(again.registry.fence('fx')).toBe(2)
      expect([...again.cache.entries.values()][0]!.map((t) => t.name)).toEqual(['a', 'new'])
    },
  )

  it(
    'lazy by cache: another desired state ' + '(a new credential, an upgrade) is a miss and starts the upstream',
    async () => {
      const { dialer, runtime, cache } = harness()
      dialer.fallback = [tool('a')]
      await runtime.apply(cachedMode('1.0.0'))
      await runtime.apply(cachedMode('2.0.0'))
      expect(dialer.specs).toHaveLength(2)
      expect(cache.entries.size).toBe(2)
    },
  )

  it(
    'lazy by cache: a damaged cached table is a miss; ' + 'the upstream lists again and the cache is rewritten',
    async () => {
      const first = harness()
      first.dialer.fallback = [tool('a')]
      await first.runtime.apply(cachedMode())
      const again = harness()
      // two tools of the same name cannot be a route: the cache file was damaged
      for (const [k] of first.cache.entries) again.cache.entries.set(k, [tool('a'), tool('a')])
      again.dialer.fallback = [tool('a')]
      await again.runtime.apply(cachedMode())
      expect(again.dialer.specs).toHaveLength(1)
      expect(again.runtime.snapshot()).toMatchObject({ mcp: { status: 'ready' }, upstream: { state: 'running' } })
      expect(again.registry.list().map((t) => t.localName)).toEqual(['fx_a'])
      expect([...again.cache.entries.values()][0]!.map((t) => t.name)).toEqual(['a'])
    },
  )

  it(
    'lazy by cache: a started upstream that is idle for idleTimeoutSeconds is stopped; ' +
      'the next call starts it again',
    async () => {
      const { dialer, runtime, registry, drained } = harness()
      dialer.fallback = [tool('a')]
      const d = cachedMode()
      await runtime.apply({
        ...d,
        release: release({
          mcp: { transport: 'stdio', command: 'node', idleTimeoutSeconds: 5 },
          cli: { entrypoint: 'cli.js' },
        }),
      })
      expect(runtime.snapshot()).toMatchObject({ upstream: { state: 'running' } })
      await vi.advanceTimersByTimeAsync(5_000)
      expect(runtime.snapshot()).toMatchObject({ mcp: { status: 'ready' }, upstream: { state: 'stopped' } })
      await registry.resolve('fx_a')!.client.callTool('a', {}, {})
      await drained()
      expect(dialer.specs).toHaveLength(2)
      expect(runtime.snapshot()).toMatchObject({ generation: 1, upstream: { state: 'running', starts: 2 } })
    },
  )
})
