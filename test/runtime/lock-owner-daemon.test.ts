import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ErrorCodes } from '../../src/runtime/errors.js'
import type { StatePaths } from '../../src/runtime/paths.js'
import { CONTROL_PROTOCOL_VERSION } from '../../src/runtime/control-protocol/version.js'
import { PRODUCT_VERSION } from '../../src/runtime/version.js'
// the built client: it spawns the daemon entry next to it (dist/runtime/daemon/main.js), so it must be dist's
import type { DaemonClient } from '#dist/runtime/client/daemon-client.js'
import { DaemonControl } from '#dist/runtime/client/daemon-control.js'
import { ensureDaemon, findDaemon } from '#dist/runtime/client/ensure-daemon.js'
import { harness, nonce } from '../support/daemon-harness.js'
import { until } from '../support/eventually.js'
import { daemonPids, isAlive } from '../support/tutti.js'

/**
 * daemon.json proves no daemon, but the daemon lock's owner record proves
 * its holder alive (round 3, item 2): the CLI waits for the holder to write
 * daemon.json again (the real daemon does: test/e2e/round3-daemon-json.test.ts)
 * and reaches it. It never starts a rival, which could not take the lock,
 * and never signals the holder. The holder is test/fixtures/fake-daemon.mjs,
 * holding the lock through the built lock module and checking the control
 * token. daemon.json first holds a wrong token: once the holder has refused
 * the CLI's health request, the CLI is known to be past its first look.
 */
const arrange = async (h: ReturnType<typeof harness>) => {
  const token = randomBytes(32).toString('base64url')
  const n = nonce()
  const version = { FAKE_VERSION: PRODUCT_VERSION, FAKE_PROTOCOL: String(CONTROL_PROTOCOL_VERSION) }
  const holder = await h.fakeLockHolder({ ...version, FAKE_NONCE: n, FAKE_TOKEN: token })
  h.writeInfo({ pid: holder.pid, port: holder.port, nonce: n, controlToken: 'w'.repeat(43) })
  const refusedOnce = () => until(() => holder.asked().includes('/control/health'))
  const rewrite = () => h.writeInfo({ pid: holder.pid, port: holder.port, nonce: n, controlToken: token })
  return { holder, refusedOnce, rewrite }
}

describe.concurrent('a live holder of the daemon lock whose daemon.json does not prove it', () => {
  const lookups: Array<[string, (paths: StatePaths) => Promise<DaemonClient | undefined>]> = [
    ['findDaemon (`daemon status`)', (paths) => findDaemon(paths)],
    ['ensureDaemon (every other command)', (paths) => ensureDaemon(paths)],
  ]
  const reaches = '%s waits for it to write daemon.json again and reaches it: nothing started, nothing signalled'
  it.for(lookups)(reaches, async ([, lookup], context) => {
    const h = harness(context, 'lock-owner')
    const { holder, refusedOnce, rewrite } = await arrange(h)
    const found = lookup(h.paths)
    expect(await refusedOnce()).toBe(true)
    const info = rewrite()
    const client = await found
    expect(client?.endpoint.port).toBe(holder.port)
    expect(client?.endpoint.controlToken).toBe(info.controlToken)
    expect(daemonPids(h.dir)).toEqual([])
    expect(new Set(holder.asked())).toEqual(new Set(['/control/health']))
    expect(isAlive(holder.pid)).toBe(true)
  })

  it('`daemon stop` asks the holder it found that way to stop, and nothing else', async (context) => {
    const h = harness(context, 'lock-owner')
    const { holder, refusedOnce, rewrite } = await arrange(h)
    const stopped = new DaemonControl(h.paths).stop()
    expect(await refusedOnce()).toBe(true)
    rewrite()
    expect(await stopped).toEqual({ stopped: true, pid: holder.pid })
    await holder.exited
    expect(holder.child.signalCode).toBeNull()
    const last = holder.events().at(-1)
    expect(last).toMatchObject({ event: 'request', path: '/control/stop', body: { revokeSessions: false } })
  })

  it('a holder that goes away meanwhile: ensureDaemon starts a daemon, which takes the lock over', async (context) => {
    const h = harness(context, 'lock-owner')
    const { holder, refusedOnce } = await arrange(h)
    const started = ensureDaemon(h.paths)
    expect(await refusedOnce()).toBe(true)
    holder.child.kill('SIGKILL')
    const pid = await h.ourDaemon(await started)
    expect(pid).not.toBe(holder.pid)
    const log = fs.readFileSync(h.paths.daemonLog, 'utf8')
    expect(log).toContain(`"msg":"took over the lock of a daemon that is gone","pid":${holder.pid}`)
  })

  it('a holder that never writes daemon.json: ensureDaemon says so, naming it; no rival', async (context) => {
    const h = harness(context, 'lock-owner')
    const { holder } = await arrange(h)
    fs.rmSync(h.paths.daemonJson)
    const err = (await ensureDaemon(h.paths).catch((e: unknown) => e)) as Error & { code?: string }
    expect(err.code).toBe(ErrorCodes.DAEMON_UNREACHABLE)
    const holds = `pid ${holder.pid} holds this state directory's daemon lock, but daemon.json does not describe it`
    expect(err.message).toContain(holds)
    expect(daemonPids(h.dir)).toEqual([])
    expect(fs.existsSync(h.paths.daemonLog)).toBe(false)
    expect(holder.asked()).toEqual([])
    expect(isAlive(holder.pid)).toBe(true)
  })
})
