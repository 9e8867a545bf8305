import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import type { LoadedRelease } from '../../src/runtime/manifest/load.js'
import { parseManifest } from '../../src/runtime/manifest/load.js'
import { ConnectorRuntime, WITHDRAW_AFTER_FAILURES, type DesiredConnector } from '../../src/runtime/reconcile/connector-runtime.js'
import { KeyedWorkQueue } from '../../src/runtime/reconcile/work-queue.js'
import { ShimKeeper } from '../../src/runtime/reconcile/shim-keeper.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { ShimPublisher } from '../../src/runtime/shims/shim-publisher.js'
import { BACKOFF } from '../../src/runtime/upstream/backoff.js'
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
  release: release({ version, mcp: { transport: 'stdio', command: 'node' }, cli: { entrypoint: 'cli.js' }, ...extra }),
  digest: version.padEnd(64, '0'),
  spec: { kind: 'stdio', key: 'fx', command: '/bin/node', args: [version], cwd: '/releases/fx', env: {} },
})

function harness() {
  const registry = new ConnectorMCPRegistry()
  const dialer = new FakeDialer()
  const shims = memoryShims()
  const log = createLogger(memorySink([]))
  const queue = new KeyedWorkQueue(4, log)
  const runtime = new ConnectorRuntime('fx', registry, new ShimKeeper(shims.publisher, log), log, (work) => queue.enqueue('fx', work), dialer.open)
  // let the queue drain: work the supervisor's events enqueued
  const drained = () => queue.enqueue('fx', async () => {})
  return { registry, dialer, shims, runtime, drained }
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
    expect(runtime.snapshot()).toMatchObject({ generation: 1, tools: 2, mcp: { status: 'ready' }, cli: { status: 'ready', shimGeneration: 1 } })
    expect(shims.onDisk.get('fx')).toBe(1)
  })

  it('a failed first start: failed with the reason, no tools, but the CLI shim is published', async () => {
    const { registry, dialer, shims, runtime } = harness()
    dialer.script.push(new Error('command "/bin/node" not found'))
    await runtime.apply(eager())
    expect(runtime.snapshot()).toMatchObject({ generation: 0, mcp: { status: 'failed', reason: 'command "/bin/node" not found' }, cli: { status: 'ready' }, upstream: { nextRetryAt: expect.any(String) } })
    expect(registry.list()).toEqual([])
    expect(shims.onDisk.get('fx')).toBe(1)
  })

  it('an upgrade that cannot start leaves the previous generation serving; when it starts later, it is committed and the old upstream retired', async () => {
    const { registry, dialer, runtime, drained } = harness()
    dialer.fallback = [tool('a')]
    await runtime.apply(eager('1.0.0'))
    const first = dialer.last
    dialer.script.push(new Error('exited with code 1 before it answered initialize'))
    await runtime.apply(eager('2.0.0'))
    expect(runtime.snapshot()).toMatchObject({ version: '2.0.0', generation: 1, mcp: { status: 'failed' } })
    expect(registry.resolve('fx_a')?.generation).toBe(1)
    expect(first.closed).toBe(false)
    dialer.fallback = [tool('a'), tool('b')]
    await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
    await drained()
    expect(runtime.snapshot()).toMatchObject({ generation: 2, tools: 2, mcp: { status: 'ready' } })
    expect(first.closed).toBe(true)
  })

  it('an exit shows starting with the reason; the restart commits a new generation on the same supervisor', async () => {
    const { dialer, runtime, drained } = harness()
    dialer.fallback = [tool('a')]
    await runtime.apply(eager())
    dialer.last.exit('killed by SIGKILL')
    expect(runtime.snapshot()).toMatchObject({ mcp: { status: 'starting', reason: 'upstream killed by SIGKILL; restarting' } })
    await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
    await drained()
    expect(runtime.snapshot()).toMatchObject({ generation: 2, mcp: { status: 'ready' }, upstream: { restarts: 1, state: 'running' } })
  })

  it(`after ${WITHDRAW_AFTER_FAILURES} failed restarts the tools are withdrawn; a later success brings them back`, async () => {
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
  })

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

  it('lazy: the route comes from the declaration without a dial; a first call whose upstream disagrees gives one new generation', async () => {
    const { registry, dialer, runtime, drained } = harness()
    const declared = [tool('a')]
    await runtime.apply(eager('1.0.0', { mcp: { transport: 'stdio', command: 'node', activation: 'lazy', tools: declared } }))
    expect(dialer.specs).toHaveLength(0)
    expect(runtime.snapshot()).toMatchObject({ generation: 1, mcp: { status: 'ready', activation: 'lazy' }, upstream: { state: 'stopped', starts: 0 } })
    dialer.fallback = [tool('a'), tool('undeclared')]
    const binding = registry.resolve('fx_a')!
    await Promise.all([binding.client.callTool('a', {}, {}), binding.client.callTool('a', {}, {})])
    await drained()
    expect(dialer.specs).toHaveLength(1)
    expect(runtime.snapshot()).toMatchObject({ generation: 2, declaredCheck: { differences: [expect.objectContaining({ tool: 'undeclared' })] } })
  })

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
})
