import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ErrorCodes } from '../../src/runtime/errors.js'
import { LOCK_OWNER_FILE, withLock } from '../../src/runtime/fs/lock.js'
import { processStartTicks, thisProcess } from '../../src/runtime/proc/pid.js'
import { CONTROL_PROTOCOL_VERSION } from '../../src/runtime/control-protocol/version.js'
import { PRODUCT_VERSION } from '../../src/runtime/version.js'
// the built client: it spawns the daemon entry next to it (dist/runtime/daemon/main.js), so it must be dist's
import { ensureDaemon, findDaemon } from '#dist/runtime/client/ensure-daemon.js'
import { closedPort, deadPid, harness, nonce, type Fake } from '../support/daemon-harness.js'
import { until } from '../support/eventually.js'
import { lockOfKilledHolder } from '../support/orphaned-lock.js'
import { daemonPids, isAlive } from '../support/tutti.js'

/**
 * What ensureDaemon and findDaemon do with the daemon.json they find. The
 * daemons they start are the real built one; a daemon of another version,
 * state dir or era is test/fixtures/fake-daemon.mjs, which notes every
 * request and signal it gets. Each test has its own state dir (listed for
 * the run's reaper) and cleans up after itself, so the tests run
 * concurrently: every real start costs ≈0.5 s of CPU, mostly spent waiting
 * on a loaded machine.
 */

describe.concurrent(
  'findDaemon only looks: a daemon.json it cannot prove as ours gives undefined, and is neither ' +
    'acted on nor changed',
  () => {
    const cases: Array<[string, (h: ReturnType<typeof harness>) => Promise<Fake | undefined>]> = [
      ['no daemon.json at all', async () => undefined],
      [
        'a dead pid, nothing on its port',
        async (h) => (h.writeInfo({ pid: await deadPid(), port: await closedPort(), nonce: nonce() }), undefined),
      ],
      [
        'a live unrelated pid whose port another process answers',
        async (h) => {
          const n = nonce()
          const other = await h.fake({ FAKE_VERSION: PRODUCT_VERSION, FAKE_NONCE: n })
          h.writeInfo({ pid: h.bystander().pid!, port: other.port, nonce: n })
          return other
        },
      ],
      [
        "another state dir's daemon",
        async (h) => {
          const n = nonce()
          const other = await h.fake({
            FAKE_VERSION: PRODUCT_VERSION,
            FAKE_NONCE: n,
            FAKE_STATE_DIR: `${h.dir}-elsewhere`,
          })
          h.writeInfo({ pid: other.pid, port: other.port, nonce: n })
          return other
        },
      ],
      [
        'a proven daemon of another product version',
        async (h) => {
          const n = nonce()
          const old = await h.fake({ FAKE_VERSION: '0.0.1-old', FAKE_NONCE: n })
          h.writeInfo({ pid: old.pid, port: old.port, nonce: n, productVersion: '0.0.1-old' })
          return old
        },
      ],
      [
        'a daemon of this state dir whose nonce is not the one daemon.json holds',
        async (h) => {
          const old = await h.fake({ FAKE_VERSION: PRODUCT_VERSION, FAKE_NONCE: nonce() })
          h.writeInfo({ pid: old.pid, port: old.port, nonce: nonce() })
          return old
        },
      ],
      [
        'a daemon of this state dir from before nonces',
        async (h) => {
          const old = await h.fake({ FAKE_VERSION: PRODUCT_VERSION, FAKE_NONCE: '' })
          h.writeInfo({ pid: old.pid, port: old.port })
          return old
        },
      ],
    ]
    it.for(cases)('%s', async ([, arrange], context) => {
      const h = harness(context)
      const fake = await arrange(h)
      const before = fs.existsSync(h.paths.daemonJson) ? fs.readFileSync(h.paths.daemonJson, 'utf8') : undefined
      expect(await findDaemon(h.paths)).toBeUndefined()
      expect(daemonPids(h.dir)).toEqual([])
      expect(fs.existsSync(h.paths.daemonJson) ? fs.readFileSync(h.paths.daemonJson, 'utf8') : undefined).toBe(before)
      if (fake) {
        expect(new Set(fake.asked())).toEqual(new Set(['/control/health']))
        expect(isAlive(fake.pid)).toBe(true)
      }
    })
  },
)

describe.concurrent('ensureDaemon', () => {
  it(
    'on an empty state dir: concurrent calls yield one daemon (daemon.json 0600), which findDaemon proves and the ' +
      'fast path reuses without the start lock',
    async (context) => {
      const h = harness(context)
      const clients = await Promise.all([ensureDaemon(h.paths), ensureDaemon(h.paths), ensureDaemon(h.paths)])
      const pid = await h.ourDaemon(clients[0]!)
      for (const c of clients) expect(c.endpoint).toEqual(clients[0]!.endpoint)
      expect(fs.statSync(h.paths.daemonJson).mode & 0o777).toBe(0o600)
      const found = await findDaemon(h.paths)
      expect(found?.endpoint).toEqual(clients[0]!.endpoint)
      expect((await found!.health()).pid).toBe(pid)
      // were ensureDaemon to wait for the start lock here, this would only end with the lock's timeout
      const again = await withLock(h.paths.startLockTarget, () => ensureDaemon(h.paths))
      expect(again.endpoint).toEqual(clients[0]!.endpoint)
      expect(daemonPids(h.dir)).toEqual([pid])
    },
  )

  it(
    "a daemon.json of a dead pid, with that pid's fresh lock left behind: the file is replaced and the orphaned " +
      'lock broken at once',
    async (context) => {
      const h = harness(context)
      // a lock refreshed just now by a holder killed with -9: a new daemon would refuse it, were it not proven gone
      const dead = await lockOfKilledHolder(h.paths.daemonLockTarget)
      h.writeInfo({ pid: dead, port: await closedPort(), nonce: nonce() })
      fs.writeFileSync(h.paths.daemonPid, `${dead}\n`)
      const pid = await h.ourDaemon(await ensureDaemon(h.paths))
      expect(pid).not.toBe(dead)
      expect(fs.readFileSync(h.paths.daemonLog, 'utf8')).toContain(
        `"msg":"took over the lock of a daemon that is gone","pid":${dead}`,
      )
    },
  )

  it(
    'a lock whose owner record names a live unrelated process (a reused pid: its start time differs) is taken at ' +
      'once; that process is never signalled',
    async (context) => {
      const h = harness(context)
      const reused = h.bystander()
      expect(await until(() => processStartTicks(reused.pid!) !== undefined)).toBe(true)
      h.writeInfo({ pid: reused.pid!, port: await closedPort(), nonce: nonce() })
      fs.writeFileSync(h.paths.daemonPid, `${reused.pid}\n`)
      fs.mkdirSync(`${h.paths.daemonLockTarget}.lock`)
      fs.writeFileSync(
        path.join(`${h.paths.daemonLockTarget}.lock`, LOCK_OWNER_FILE),
        JSON.stringify({ ...thisProcess(), pid: reused.pid, startTicks: '1' }),
      )
      const pid = await h.ourDaemon(await ensureDaemon(h.paths))
      expect(pid).not.toBe(reused.pid)
      expect(isAlive(reused.pid!)).toBe(true)
      expect(reused.signalCode).toBeNull()
    },
  )

  it(
    'a fresh lock without an owner record (an older tutti, or one being taken) is not broken, even beside a dead ' +
      'daemon.pid: the new daemon refuses it',
    async (context) => {
      const h = harness(context)
      fs.writeFileSync(h.paths.daemonPid, `${await deadPid()}\n`)
      fs.mkdirSync(`${h.paths.daemonLockTarget}.lock`)
      const err = (await ensureDaemon(h.paths).catch((e: unknown) => e)) as Error & { code?: string }
      expect(err.code).toBe(ErrorCodes.DAEMON_START_FAILED)
      expect(err.message).toContain('another daemon holds the lock for this state directory')
      expect(fs.existsSync(`${h.paths.daemonLockTarget}.lock`)).toBe(true)
      expect(daemonPids(h.dir)).toEqual([])
    },
  )

  it(
    'a daemon.json (and daemon.pid) naming a live unrelated process, its port answered by another one: replaced; ' +
      'neither is signalled or asked to stop',
    async (context) => {
      const h = harness(context)
      const sleeper = h.bystander()
      const n = nonce()
      const other = await h.fake({ FAKE_VERSION: PRODUCT_VERSION, FAKE_NONCE: n })
      h.writeInfo({ pid: sleeper.pid!, port: other.port, nonce: n })
      fs.writeFileSync(h.paths.daemonPid, `${sleeper.pid}\n`)
      const pid = await h.ourDaemon(await ensureDaemon(h.paths))
      expect([sleeper.pid, other.pid]).not.toContain(pid)
      expect(isAlive(sleeper.pid!)).toBe(true)
      expect(sleeper.signalCode).toBeNull()
      expect(isAlive(other.pid)).toBe(true)
      expect(new Set(other.asked())).toEqual(new Set(['/control/health']))
    },
  )

  // a daemon of another product version is replaced in test/e2e/daemon-lifecycle.test.ts (a real older copy); here only
  // the protocol differs
  it(
    'a proven daemon of another control protocol version is asked to stop with its control token, keeping ' +
      'sessions, and leaves by itself: no signal; ours takes over',
    async (context) => {
      const h = harness(context)
      const n = nonce()
      const old = await h.fake({
        FAKE_VERSION: PRODUCT_VERSION,
        FAKE_PROTOCOL: String(CONTROL_PROTOCOL_VERSION - 1),
        FAKE_NONCE: n,
      })
      const info = h.writeInfo({
        pid: old.pid,
        port: old.port,
        nonce: n,
        protocolVersion: CONTROL_PROTOCOL_VERSION - 1,
      })
      const pid = await h.ourDaemon(await ensureDaemon(h.paths))
      await old.exited
      expect(old.child.signalCode).toBeNull()
      expect(pid).not.toBe(old.pid)
      // health as often as ensureDaemon looks, then one stop, and nothing after it
      expect(old.asked().filter((p) => p !== '/control/health')).toEqual(['/control/stop'])
      expect(old.events().at(-1)).toEqual({
        event: 'request',
        path: '/control/stop',
        authorization: `Bearer ${info.controlToken}`,
        body: { revokeSessions: false },
      })
    },
  )

  it(
    'a daemon of this state dir that cannot prove it is the one daemon.json describes (from before nonces) is only ' +
      'asked to stop, never signalled',
    async (context) => {
      const h = harness(context)
      const old = await h.fake({ FAKE_VERSION: '0.0.1-old', FAKE_NONCE: '' })
      h.writeInfo({ pid: old.pid, port: old.port, productVersion: '0.0.1-old' })
      const pid = await h.ourDaemon(await ensureDaemon(h.paths))
      await old.exited
      expect(old.child.signalCode).toBeNull()
      expect(pid).not.toBe(old.pid)
      expect(old.asked().filter((p) => p !== '/control/health')).toEqual(['/control/stop'])
      expect(old.events().at(-1)).toMatchObject({ path: '/control/stop', body: { revokeSessions: false } })
    },
  )

  it(
    "a lock a live holder refreshes: the new daemon refuses at once, ensureDaemon says why in daemon.log's words, " +
      'and the holder is left alone',
    async (context) => {
      const h = harness(context)
      const holder = h.bystander()
      fs.writeFileSync(h.paths.daemonPid, `${holder.pid}\n`)
      fs.mkdirSync(`${h.paths.daemonLockTarget}.lock`)
      const err = (await ensureDaemon(h.paths).catch((e: unknown) => e)) as Error & { code?: string }
      expect(err.code).toBe(ErrorCodes.DAEMON_START_FAILED)
      expect(err.message).toMatch(/^the daemon exited during start; daemon\.log says:\n/)
      expect(err.message).toContain('another daemon holds the lock for this state directory')
      expect(isAlive(holder.pid!)).toBe(true)
      expect(fs.existsSync(`${h.paths.daemonLockTarget}.lock`)).toBe(true)
      expect(fs.readFileSync(h.paths.daemonPid, 'utf8')).toBe(`${holder.pid}\n`)
      expect(daemonPids(h.dir)).toEqual([])
    },
  )
})
