import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConnectorInstaller } from '../../src/runtime/install/connector-installer.js'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { statePaths, type StatePaths } from '../../src/runtime/paths.js'
import { Reconciler } from '../../src/runtime/reconcile/reconciler.js'
import { skillRootsOf } from '../../src/runtime/reconcile/connector-snapshot.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import { ShimPublisher } from '../../src/runtime/shims/shim-publisher.js'
import { ConnectorStore } from '../../src/runtime/store/connector-store.js'
import { makeConnector, skill } from '../support/connector-fixture.js'
import { FakeDialer, tool } from '../support/fake-upstream.js'
import { tempStateDir } from '../support/tutti.js'

const manifest = (overrides: Record<string, unknown> = {}) => ({
  schemaVersion: 1,
  key: 'fx',
  name: 'Fx',
  version: '1.0.0',
  auth: { kind: 'env', variables: [{ name: 'FX_KEY' }] },
  mcp: { transport: 'stdio', command: 'node', args: ['server.js'] },
  cli: { entrypoint: 'cli.js' },
  skills: 'docs/skills',
  ...overrides,
})
const files = { 'server.js': '', 'cli.js': 'console.log(1)\n', 'docs/skills/fx-howto/SKILL.md': skill('fx-howto') }

describe('Reconciler', () => {
  let dir: string
  let paths: StatePaths
  let store: ConnectorStore
  let dialer: FakeDialer
  let reconciler: Reconciler
  let registry: ConnectorMCPRegistry
  beforeEach(() => {
    dir = tempStateDir('reconciler')
    paths = statePaths(dir)
    store = new ConnectorStore(paths)
    dialer = new FakeDialer()
    dialer.fallback = [tool('a')]
    registry = new ConnectorMCPRegistry()
    const log = createLogger(memorySink([]))
    reconciler = new Reconciler(store, registry, new ShimPublisher(paths, log), paths, log, dialer.open)
  })
  afterEach(async () => {
    await reconciler.closeAll()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const install = (m = manifest()) =>
    new ConnectorInstaller(paths, store).install(makeConnector(m, files), { env: process.env })

  it(
    'a connector missing its credential is needs-auth on every interface, ' +
      'with the fix in the reason, and dials nothing',
    async () => {
      await install()
      const [state] = await reconciler.reconcile(['fx'])
      expect(state).toMatchObject({
        key: 'fx',
        status: 'needs-auth',
        reason: expect.stringContaining('tutti connector connect fx --env FX_KEY='),
      })
      expect(reconciler.snapshotOf('fx')).toMatchObject({
        active: false,
        mcp: { status: 'needs-auth' },
        cli: { status: 'needs-auth' },
      })
      expect(dialer.specs).toEqual([])
      expect(skillRootsOf(reconciler.snapshots())).toEqual([])
    },
  )

  it(
    'connected: ready, its route committed, its shim on disk, ' +
      'its Skill root from the release (a nested skills folder too)',
    async () => {
      await install()
      await store.connect('fx', { credentials: { FX_KEY: 'k-123456' }, settings: {}, runtime: { environment: {} } })
      const [state] = await reconciler.reconcile(['fx'])
      expect(state).toMatchObject({ status: 'ready', generation: 1, tools: 1, cli: 'ready' })
      expect(registry.list().map((t) => t.localName)).toEqual(['fx_a'])
      expect(fs.existsSync(paths.shimPath('fx'))).toBe(true)
      const release = reconciler.snapshotOf('fx')!.releaseRoot!
      expect(skillRootsOf(reconciler.snapshots())).toEqual([
        {
          connector: 'fx',
          dir: path.join(release, 'docs', 'skills'),
          releaseRoot: release,
          skills: [{ name: 'fx-howto', dir: path.join(release, 'docs', 'skills', 'fx-howto') }],
        },
      ])
      // the credential reached the upstream's environment under its own name
      expect(dialer.specs[0]).toMatchObject({ kind: 'stdio', env: { FX_KEY: 'k-123456' } })
    },
  )

  it('uninstalled: route, shim and releases go; the data directory stays', async () => {
    await install(manifest({ auth: { kind: 'none' } }))
    await reconciler.reconcile(['fx'])
    fs.writeFileSync(path.join(paths.dataDir('fx'), 'keep.txt'), 'x')
    await store.uninstall('fx')
    expect(await reconciler.reconcile(['fx'])).toEqual([])
    expect(registry.list()).toEqual([])
    expect(fs.existsSync(paths.shimPath('fx'))).toBe(false)
    expect(fs.readdirSync(paths.connectorDir('fx'))).toEqual(['data'])
    expect(dialer.last.closed).toBe(true)
  })

  it('a full reconcile removes a stray shim no active connector published, and settles every connector', async () => {
    await install(manifest({ auth: { kind: 'none' } }))
    await reconciler.reconcile()
    fs.copyFileSync(paths.shimPath('fx'), paths.shimPath('ghost'))
    await reconciler.reconcile()
    expect(fs.existsSync(paths.shimPath('ghost'))).toBe(false)
    expect(fs.existsSync(paths.shimPath('fx'))).toBe(true)
    await reconciler.settled(['fx'])
    expect(reconciler.snapshots().map((s) => s.key)).toEqual(['fx'])
  })

  it('a reinstall that changes the spec while a connect hangs abandons that connect at once', async () => {
    dialer.script.push(new Promise(() => {}))
    await install(manifest({ auth: { kind: 'none' } }))
    const first = reconciler.reconcile(['fx'])
    // wait for the event (the dial has begun), not for a time
    while (dialer.specs.length === 0) await new Promise((r) => setImmediate(r))
    await install(manifest({ auth: { kind: 'none' }, version: '2.0.0' }))
    await reconciler.reconcile(['fx'])
    await first
    expect(reconciler.snapshotOf('fx')).toMatchObject({ version: '2.0.0', mcp: { status: 'ready' } })
  })
})
