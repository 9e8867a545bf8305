import { listeningPort } from './listening-port.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { expect, type TestContext } from 'vitest'
import { statePaths, type StatePaths } from '../../src/runtime/paths.js'
import { readDaemonInfo, type DaemonInfo } from '../../src/runtime/store/daemon-info.js'
import { CONTROL_PROTOCOL_VERSION } from '../../src/runtime/control-protocol/version.js'
import { PRODUCT_VERSION } from '../../src/runtime/version.js'
import { DaemonClient } from '#dist/runtime/client/daemon-client.js'
import { until } from './eventually.js'
import { daemonPids, isAlive, REPO, tempStateDir } from './tutti.js'

/**
 * One state dir for a test of the CLI's daemon client (test/runtime/), with
 * what it meets there: stale files, unrelated processes, and
 * test/fixtures/fake-daemon.mjs, a daemon of another version, state dir or
 * era that notes every request and signal it gets.
 */
const FAKE_DAEMON = path.join(REPO, 'test/fixtures/fake-daemon.mjs')
/** The built lock module, which a fake holding the daemon's lock takes it through (so with its owner record). */
const LOCK_MODULE = pathToFileURL(path.join(REPO, 'dist/runtime/fs/lock.js')).href

export interface FakeEvent {
  event: 'request' | 'signal'
  path?: string
  authorization?: string | null
  body?: unknown
  signal?: string
}
export interface Fake {
  child: ChildProcess
  pid: number
  port: number
  exited: Promise<void>
  events(): FakeEvent[]
  /** The request paths and signals it got, in order. */
  asked(): string[]
}

export const exitOf = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))

/** A pid that was a process a moment ago. */
export async function deadPid(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' })
  await exitOf(child)
  expect(isAlive(child.pid!)).toBe(false)
  return child.pid!
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export const nonce = (): string => randomBytes(16).toString('hex')

/** One test's state dir, its helpers, and the cleanup that leaves nothing running. */
export function harness({ onTestFinished }: TestContext, label = 'ensure-daemon') {
  const dir = tempStateDir(label)
  const paths: StatePaths = statePaths(dir)
  const children: ChildProcess[] = []
  onTestFinished(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    // our daemons: asked to stop, then (proven by their environment and command line) killed if still there
    const info = await readDaemonInfo(paths)
    if (info && daemonPids(dir).includes(info.pid)) await new DaemonClient(info).stop().catch(() => undefined)
    await until(() => daemonPids(dir).length === 0, 10_000)
    for (const pid of daemonPids(dir)) process.kill(pid, 'SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const track = (child: ChildProcess): ChildProcess => {
    children.push(child)
    return child
  }

  return {
    dir,
    paths,
    /** An unrelated live process whose pid a stale file may name. */
    bystander: (): ChildProcess => track(spawn('sleep', ['600'], { stdio: 'ignore' })),

    async fake(env: Record<string, string>): Promise<Fake> {
      const log = path.join(dir, `fake-${randomBytes(4).toString('hex')}.ndjson`)
      fs.writeFileSync(log, '')
      const fakeEnv = { PATH: process.env.PATH, FAKE_LOG: log, FAKE_STATE_DIR: dir, ...env }
      const options = { env: fakeEnv, stdio: ['ignore', 'pipe', 'inherit'] as ('ignore' | 'pipe' | 'inherit')[] }
      const child = track(spawn(process.execPath, [FAKE_DAEMON], options))
      const exited = exitOf(child)
      const port = await listeningPort(child, 'the fake daemon')
      const events = (): FakeEvent[] =>
        fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as FakeEvent)
      const asked = (): string[] => events().map((e) => (e.event === 'request' ? e.path! : `signal ${e.signal}`))
      return { child, pid: child.pid!, port, exited, events, asked }
    },

    /** A fake that holds this state dir's daemon lock, as a live daemon does. */
    fakeLockHolder(env: Record<string, string>): Promise<Fake> {
      return this.fake({ ...env, FAKE_HOLD_LOCK: paths.daemonLockTarget, FAKE_LOCK_MODULE: LOCK_MODULE })
    },

    writeInfo(fields: Partial<DaemonInfo> & Pick<DaemonInfo, 'pid' | 'port'>): DaemonInfo {
      const info: DaemonInfo = {
        productVersion: PRODUCT_VERSION,
        protocolVersion: CONTROL_PROTOCOL_VERSION,
        startedAt: new Date().toISOString(),
        controlToken: randomBytes(32).toString('base64url'),
        ...fields,
      }
      fs.writeFileSync(paths.daemonJson, JSON.stringify(info), { mode: 0o600 })
      return info
    },

    /** The one live daemon of this state dir: it is daemon.json's, of our version, and serves this dir. */
    async ourDaemon(client: DaemonClient): Promise<number> {
      const health = await client.health()
      const ours = { productVersion: PRODUCT_VERSION, protocolVersion: CONTROL_PROTOCOL_VERSION, stateDir: dir }
      expect(health).toMatchObject(ours)
      expect(daemonPids(dir)).toEqual([health.pid])
      const info = await readDaemonInfo(paths)
      expect(info?.pid).toBe(health.pid)
      expect(client.endpoint.port).toBe(info?.port)
      return health.pid
    },
  }
}
