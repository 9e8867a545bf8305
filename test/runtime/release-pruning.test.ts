import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConnectorInstaller } from '../../src/runtime/install/connector-installer.js'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { loadRelease } from '../../src/runtime/manifest/load.js'
import { statePaths, type StatePaths } from '../../src/runtime/paths.js'
import { Reconciler } from '../../src/runtime/reconcile/reconciler.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import { ShimPublisher } from '../../src/runtime/shims/shim-publisher.js'
import { ConnectorStore } from '../../src/runtime/store/connector-store.js'
import { withLock } from '../../src/runtime/fs/lock.js'
import { pruneReleases, storeAndRecord } from '../../src/runtime/store/release-pruning.js'
import { storeRelease } from '../../src/runtime/store/release-store.js'
import { RELEASE_KIND, sourceIdentity } from '../../src/runtime/store/source-identity.js'
import { baseManifest, CLI_FILE, makeConnector } from '../support/connector-fixture.js'
import { FakeDialer, tool } from '../support/fake-upstream.js'
import { until } from '../support/eventually.js'
import { tempStateDir } from '../support/tutti.js'

/*
 * An install stores its release, then records it. A full reconcile (the one at daemon start) in
 * between saw the new connector directory as an uninstalled leftover and deleted the release: the
 * install then failed walking it, or the connector with `command "/usr/bin/node" not found`.
 */
describe('release pruning against a concurrent install', () => {
  let dir: string
  let paths: StatePaths
  let store: ConnectorStore
  let reconciler: Reconciler
  beforeEach(() => {
    dir = tempStateDir('release-pruning')
    paths = statePaths(dir)
    store = new ConnectorStore(paths)
    const dialer = new FakeDialer()
    dialer.fallback = [tool('a')]
    const log = createLogger(memorySink([]))
    reconciler = new Reconciler(
      store,
      new ConnectorMCPRegistry(),
      new ShimPublisher(paths, log),
      paths,
      log,
      dialer.open,
    )
  })
  afterEach(async () => {
    await reconciler.closeAll()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const fixture = (version = '1.0.0') =>
    makeConnector(baseManifest({ key: 'fx', version }), { 'server.js': '', ...CLI_FILE })

  it('a full reconcile during an install waits for its record, and keeps the release', async () => {
    const release = await loadRelease(fixture())
    let sweep: Promise<unknown> | undefined
    let swept = false
    const source = sourceIdentity(RELEASE_KIND, 'Fx')
    await storeAndRecord(paths, release, async (stored) => {
      // the daemon's start-up sweep, while the release is stored and not yet recorded
      sweep = reconciler.reconcile().then(() => (swept = true))
      // long enough for an unlocked sweep to finish; a slow machine can only make this pass wrongly
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(swept).toBe(false)
      expect(fs.existsSync(stored.dir)).toBe(true)
      return store.record(stored, { environment: {} }, { source, checked: { same: true } })
    })
    await sweep
    const [state] = await reconciler.reconcile(['fx'])
    expect(state).toMatchObject({ key: 'fx', status: 'ready' })
  })

  // the copy and digest are synchronous over a whole node_modules: a lock held through them was not refreshed, and
  // on a loaded machine a concurrent install took it over (LOCK_COMPROMISED in install-sources' npm installs)
  it('the release is copied before the releases lock is taken; only its rename and record hold it', async () => {
    const release = await loadRelease(fixture())
    const source = sourceIdentity(RELEASE_KIND, 'Fx')
    let recorded: Promise<unknown> | undefined
    const staged = () =>
      (fs.existsSync(paths.releasesDir('fx')) ? fs.readdirSync(paths.releasesDir('fx')) : []).filter((n) =>
        fs.existsSync(`${paths.releasesDir('fx')}/${n}/server.js`),
      )
    await withLock(paths.releasesLockTarget, async () => {
      recorded = storeAndRecord(paths, release, (stored) =>
        store.record(stored, { environment: {} }, { source, checked: { same: true } }),
      )
      // while another process holds the lock, the whole copy is made beside the stored releases
      expect(await until(() => staged().length === 1)).toBe(true)
      expect(staged()[0]).toMatch(/^\.tmp-/)
    })
    await recorded
    const [entry] = staged()
    expect(entry).toMatch(/^[0-9a-f]{64}$/)
    expect(fs.readdirSync(paths.releasesDir('fx'))).toEqual([entry])
  })

  it('two installs of the same content copied at once: the second keeps the release the first stored', async () => {
    const release = await loadRelease(fixture())
    const source = sourceIdentity(RELEASE_KIND, 'Fx')
    const inodes: number[] = []
    const installs: Promise<unknown>[] = []
    const copies = () => fs.readdirSync(paths.releasesDir('fx')).filter((n) => n.startsWith('.tmp-'))
    await withLock(paths.releasesLockTarget, async () => {
      for (let i = 0; i < 2; i++)
        installs.push(
          storeAndRecord(paths, release, (stored) => {
            inodes.push(fs.statSync(stored.dir).ino)
            return store.record(stored, { environment: {} }, { source, checked: { same: true } })
          }),
        )
      // both copies made read-only, their last step after finding no release of their digest, before either
      // could store one
      const done = (n: string) => (fs.statSync(`${paths.releasesDir('fx')}/${n}/bin`).mode & 0o777) === 0o555
      const staged = () =>
        copies().length === 2 && copies().every((n) => fs.existsSync(`${paths.releasesDir('fx')}/${n}/bin`) && done(n))
      expect(await until(() => fs.existsSync(paths.releasesDir('fx')) && staged())).toBe(true)
    })
    await Promise.all(installs)
    // replaced, it would have been missing for a moment under a daemon that already ran from it
    expect(inodes).toHaveLength(2)
    expect(inodes[1]).toBe(inodes[0])
    expect(copies()).toEqual([])
  })

  it('a prune keeps the installed digest, whatever its caller was told to keep', async () => {
    const installer = new ConnectorInstaller(paths, store)
    const first = await installer.install(fixture('1.0.0'), { env: process.env })
    const other = await storeRelease(paths, await loadRelease(fixture('2.0.0')))
    const removed = await pruneReleases(paths, 'fx', new Set())
    expect(removed).toEqual([other.digest])
    expect(fs.existsSync(paths.releaseDir('fx', first.digest))).toBe(true)
    expect(fs.existsSync(other.dir)).toBe(false)
  })

  it('an uninstalled key loses its releases and empty directories, and keeps a data dir with data', async () => {
    await storeRelease(paths, await loadRelease(fixture()))
    fs.mkdirSync(paths.dataDir('fx'), { recursive: true })
    fs.writeFileSync(`${paths.dataDir('fx')}/keep.db`, 'x')
    await pruneReleases(paths, 'fx', new Set())
    expect(fs.readdirSync(paths.connectorDir('fx'))).toEqual(['data'])
    fs.rmSync(paths.dataDir('fx'), { recursive: true })
    await pruneReleases(paths, 'fx', new Set())
    expect(fs.existsSync(paths.connectorDir('fx'))).toBe(false)
  })
})
