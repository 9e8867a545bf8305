import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, until } from '../support/eventually.js'
import { FAULT_TOOLS, lazyConnector } from '../support/fixture-connector.js'
import { installed, prepared, uninstalled } from '../support/in-process.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { childPids, cleanupState, connectorState, readDaemonJson, tempStateDir, tuttiJson } from '../support/tutti.js'

const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text

// One daemon for the file; every test installs lazy connectors of its own (its own keys), so other
// tests' upstreams may be running beside them: spawns are counted as new children of the daemon.
describe('lazy activation from declared tools', () => {
  let dir: string
  let binding: Binding
  const state = (key: string) => connectorState(dir, key)
  const daemonChildren = () => childPids(readDaemonJson(dir)!.pid)
  const newSince = (before: number[]) => daemonChildren().filter((p) => !before.includes(p))
  /** Resolves once the stream has seen `n` list_changed notifications. */
  const seen = (changes: unknown[], n: number) => until(() => changes.length >= n)
  /**
   * "Exactly one": the expected notification is waited for (`seen`); that no second one follows can only be
   * shown by a quiet period. Notifications carry nothing that tells them apart, so a later change of another
   * connector cannot serve as a barrier (its notice and a late duplicate would count the same).
   */
  const quietPeriod = () => new Promise((r) => setTimeout(r, 300))

  beforeAll(async () => {
    dir = tempStateDir('lazy')
    binding = (await prepared(dir, { session: 'lazy' })).mcpServers[0]!
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('the route is listed (both eras) before anything is spawned', async () => {
    const res = await installed(dir, lazyConnector('lz'))
    expect(res.state).toMatchObject({
      status: 'ready',
      activation: 'lazy',
      upstream: 'stopped',
      tools: FAULT_TOOLS.length,
      starts: 0,
    })
    const before = daemonChildren()
    for (const make of [modernClient, legacyClient]) {
      const client = await make(binding)
      const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith('lz_'))
      expect(tools.map((t) => t.name).sort()).toEqual(FAULT_TOOLS.map((t) => `lz_${t.name}`).sort())
      expect(tools.find((t) => t.name === 'lz_echo')?.inputSchema).toEqual(FAULT_TOOLS[0]!.inputSchema)
      await client.close()
    }
    expect(newSince(before)).toEqual([])
    expect(await state('lz')).toMatchObject({ upstream: 'stopped', starts: 0 })
  })

  it('20 concurrent first calls start the upstream exactly once, and every call is answered', async () => {
    await installed(dir, lazyConnector('burst'))
    const before = daemonChildren()
    const client = await modernClient(binding)
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.callTool({ name: 'burst_echo', arguments: { message: `m${i}` } })),
    )
    expect(results.map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`))
    const s = await state('burst')
    expect(s).toMatchObject({ upstream: 'running', starts: 1 })
    expect(newSince(before)).toEqual([s.pid])
    // the declaration matched: no new generation
    expect(s.generation).toBe(1)
    await client.close()
  })

  it(
    'a declaration that disagrees with the upstream: ' +
      'one new generation, one list_changed, a log entry naming the difference',
    async () => {
      const declared = FAULT_TOOLS.filter((t) => t.name !== 'grow').map((t) =>
        t.name === 'echo' ? { ...t, description: 'an outdated description' } : t,
      )
      const client = await modernClient(binding)
      const changes: unknown[] = []
      client.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n))
      // listening before the install, and waiting for its notice: a stream opened just after a commit may still get
      // it, which a quiet period first lets arrive before the count starts
      const sub = await client.listen({ toolsListChanged: true })
      await quietPeriod()
      changes.length = 0
      await installed(dir, lazyConnector('drift', { declared, variant: 'v2' }))
      expect(await seen(changes, 1)).toBe(true)
      const before = await state('drift')
      expect(before.tools).toBe(declared.length)
      // the call that triggers the start still gets its answer
      expect(text(await client.callTool({ name: 'drift_echo', arguments: { message: 'first' } }))).toBe('first')
      expect(await seen(changes, 2)).toBe(true)
      await quietPeriod()
      expect(changes).toHaveLength(2)
      const after = await state('drift')
      expect(after.generation).toBe(before.generation + 1)
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(['drift_grow', 'drift_added']))
      expect((await client.listTools()).tools.find((t) => t.name === 'drift_echo')?.description).toBe(
        'Echo the message back',
      )
      const log = fs
        .readFileSync(path.join(dir, 'daemon.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      const entry = log.find((l) => l.msg === 'declared tools differ from the upstream' && l.connector === 'drift')
      expect(entry.differences).toEqual([
        { tool: 'added', problem: 'listed by the upstream but not declared' },
        { tool: 'echo', problem: 'fields differ', fields: ['description'] },
        { tool: 'grow', problem: 'listed by the upstream but not declared' },
      ])
      await sub.close()
      await client.close()
    },
  )

  it('the idle timeout stops the upstream; the next call starts it again', async () => {
    await installed(dir, lazyConnector('idle', { idleTimeoutSeconds: 1 }))
    const client = await modernClient(binding)
    const pid1 = Number(text(await client.callTool({ name: 'idle_pid', arguments: {} })))
    // no status check in between: on a loaded machine one status call may outlast the 1 s idle timeout
    const stopped = await eventually(
      () => state('idle'),
      (s) => s.upstream === 'stopped',
    )
    expect(stopped).toMatchObject({ upstream: 'stopped', starts: 1, status: 'ready' })
    expect(daemonChildren()).not.toContain(pid1)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('idle_echo')
    const pid2 = Number(text(await client.callTool({ name: 'idle_pid', arguments: {} })))
    expect(pid2).not.toBe(pid1)
    expect(await state('idle')).toMatchObject({ starts: 2, status: 'ready' })
    await client.close()
  })

  it("a running lazy upstream's own tools/list_changed rebuilds the route too", async () => {
    await installed(dir, lazyConnector('grower'))
    const client = await modernClient(binding)
    // running first (its declaration matches: no new generation), then it changes its own table
    await client.callTool({ name: 'grower_echo', arguments: { message: 'start' } })
    const before = await state('grower')
    expect(before.upstream).toBe('running')
    await client.callTool({ name: 'grower_grow', arguments: {} })
    const after = await eventually(
      () => state('grower'),
      (s) => s.generation !== before.generation,
    )
    expect(after.generation).toBe(before.generation + 1)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(`grower_grown-${FAULT_TOOLS.length}`)
    await client.close()
  })

  it('uninstalling a running lazy connector closes its upstream', async () => {
    await installed(dir, lazyConnector('leaving'))
    const client = await modernClient(binding)
    await client.callTool({ name: 'leaving_echo', arguments: { message: 'start' } })
    await client.close()
    const pid = (await state('leaving')).pid
    expect(daemonChildren()).toContain(pid)
    await uninstalled(dir, 'leaving')
    expect(await until(() => !daemonChildren().includes(pid))).toBe(true)
  })
})

describe('scale: 50 lazy connectors', () => {
  let dir: string
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('the daemon starts and serves tools/list for 50 lazy connectors without spawning one upstream', async () => {
    dir = tempStateDir('lazy50')
    const { ConnectorStore } = await import('../../src/runtime/store/connector-store.js')
    const { ConnectorInstaller } = await import('../../src/runtime/install/connector-installer.js')
    const { statePaths } = await import('../../src/runtime/paths.js')
    const installer = new ConnectorInstaller(statePaths(dir), new ConnectorStore(statePaths(dir)))
    for (let i = 0; i < 50; i++)
      await installer.install(lazyConnector(`lazy-${String(i).padStart(2, '0')}`), { env: process.env })
    const started = await tuttiJson(dir, ['daemon', 'start'])
    expect(started.connectors).toHaveLength(50)
    expect(
      started.connectors.every(
        (c: { status: string; upstream: string }) => c.status === 'ready' && c.upstream === 'stopped',
      ),
    ).toBe(true)
    const binding = (await prepared(dir, { provider: 'claude', workspace: 'w', session: 's' })).mcpServers[0]!
    for (const make of [modernClient, legacyClient]) {
      const client = await make(binding)
      expect((await client.listTools()).tools).toHaveLength(50 * FAULT_TOOLS.length)
      await client.close()
    }
    expect(childPids(started.pid)).toEqual([])
  })
})
