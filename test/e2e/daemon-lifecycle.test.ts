import { CONTROL_PROTOCOL_VERSION } from '../../src/runtime/control-protocol/version.js'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConnectorInstaller } from '../../src/runtime/install/connector-installer.js'
import { statePaths } from '../../src/runtime/paths.js'
import { ConnectorStore } from '../../src/runtime/store/connector-store.js'
import { until } from '../support/eventually.js'
import { probeConnector } from '../support/fixture-connector.js'
import {
  cleanupState,
  daemonPids,
  isAlive,
  readDaemonJson,
  REPO,
  spawnTutti,
  tempStateDir,
  tutti,
  tuttiJson,
} from '../support/tutti.js'

const dirs: string[] = []
function state(label: string): string {
  const dir = tempStateDir(label)
  dirs.push(dir)
  return dir
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await cleanupState(dir)
})

/** Install a CLI-only connector in-process: these tests are about the daemon, not about installing or upstreams. */
async function installProbe(dir: string): Promise<void> {
  const installer = new ConnectorInstaller(statePaths(dir), new ConnectorStore(statePaths(dir)))
  await installer.install(probeConnector('probe'), { env: process.env })
}

describe('daemon lifecycle', () => {
  it(
    '32 concurrent `connector available --json` with no daemon: ' + 'all succeed, same output, exactly one daemon',
    async () => {
      const dir = state('race')
      await installProbe(dir)
      expect(daemonPids(dir)).toEqual([])
      const results = await Promise.all(
        Array.from({ length: 32 }, () => tutti(dir, ['connector', 'available', '--json'])),
      )
      for (const r of results) expect(r.code, r.stderr).toBe(0)
      const outputs = new Set(results.map((r) => r.stdout))
      expect(outputs.size).toBe(1)
      expect(JSON.parse(results[0]!.stdout).connectors.map((c: { key: string }) => c.key)).toEqual(['probe'])
      const pids = daemonPids(dir)
      expect(pids).toHaveLength(1)
      expect(readDaemonJson(dir)?.pid).toBe(pids[0])
    },
  )

  it('recovers after kill -9 of the daemon on the next call', async () => {
    const dir = state('kill9')
    await installProbe(dir)
    await tuttiJson(dir, ['daemon', 'start'])
    const before = readDaemonJson(dir)!
    process.kill(before.pid, 'SIGKILL')
    expect(await until(() => !isAlive(before.pid))).toBe(true)
    const started = Date.now()
    const res = await tuttiJson(dir, ['connector', 'available'])
    const recoveryMs = Date.now() - started
    expect(res.connectors[0].key).toBe('probe')
    const after = readDaemonJson(dir)!
    expect(after.pid).not.toBe(before.pid)
    expect(daemonPids(dir)).toEqual([after.pid])
    // what npm run build made: the bundle, not tsc's module graph
    expect(fs.readFileSync(`/proc/${after.pid}/cmdline`, 'utf8').split('\0')[1]).toBe(
      path.join(REPO, 'dist', 'daemon', 'main.js'),
    )
    // the restarted daemon asks for its previous port first
    expect(after.port).toBe(before.port)
    // the dead daemon's lock, still fresh, is taken over because its owner record proves the holder gone
    expect(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')).toContain(
      `"msg":"took over the lock of a daemon that is gone","pid":${before.pid}`,
    )
    console.log(`kill -9 recovery: next call took ${recoveryMs} ms`)
  })

  it('a daemon saves the code cache of its bundle after start, and the next daemon starts from it', async () => {
    const dir = state('code-cache')
    const log = (): Array<{ msg: string; use?: string }> =>
      fs
        .readFileSync(path.join(dir, 'daemon.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    await tuttiJson(dir, ['daemon', 'start'])
    expect(await until(() => log().some((l) => l.msg === 'code cache written'))).toBe(true)
    const [cache] = fs.readdirSync(path.join(dir, 'code-cache'))
    expect(cache).toMatch(/^daemon-[0-9a-f]{16}-v8-.+\.cache$/)
    expect(fs.statSync(path.join(dir, 'code-cache', cache!)).mode & 0o777).toBe(0o600)
    await tuttiJson(dir, ['daemon', 'stop'])
    await tuttiJson(dir, ['daemon', 'start'])
    // logged once the start-up reconcile is done, which may be after `daemon start` saw it healthy
    const uses = () => log().flatMap((l) => (l.msg === 'code cache' ? [l.use] : []))
    expect(await until(() => uses().length === 2)).toBe(true)
    expect(uses()).toEqual(['absent', 'accepted'])
  })

  it('replaces a daemon of another version instead of reusing it', async () => {
    const dir = state('version')
    // an "older install": a copy of the built package with another version, sharing node_modules
    const old = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-old-'))
    fs.cpSync(path.join(REPO, 'dist'), path.join(old, 'dist'), { recursive: true })
    fs.cpSync(path.join(REPO, 'bin'), path.join(old, 'bin'), { recursive: true })
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'))
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8'))
    fs.writeFileSync(path.join(old, 'oclif.manifest.json'), JSON.stringify({ ...manifest, version: '0.0.1-old' }))
    fs.writeFileSync(path.join(old, 'package.json'), JSON.stringify({ ...pkg, version: '0.0.1-old' }))
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(old, 'node_modules'))
    try {
      execFileSync(process.execPath, [path.join(old, 'bin', 'run.js'), 'daemon', 'start', '--json'], {
        env: { ...process.env, TUTTI_STATE_DIR: dir },
      })
      const oldInfo = readDaemonJson(dir)!
      expect(oldInfo.productVersion).toBe('0.0.1-old')
      const status = await tuttiJson(dir, ['daemon', 'status'])
      // status never starts or adopts a foreign daemon
      expect(status.running).toBe(false)
      await tuttiJson(dir, ['connector', 'available'])
      const info = readDaemonJson(dir)!
      expect(info.productVersion).toBe(pkg.version)
      expect(info.pid).not.toBe(oldInfo.pid)
      expect(await until(() => !isAlive(oldInfo.pid))).toBe(true)
      expect(daemonPids(dir)).toEqual([info.pid])
    } finally {
      fs.rmSync(old, { recursive: true, force: true })
    }
  })

  it('status reports pid, port, version, uptime and connector states; stop cleans up', async () => {
    const dir = state('status')
    await tuttiJson(dir, ['connector', 'install', probeConnector('locked', { auth: ['LOCKED_KEY'] })])
    const status = await tuttiJson(dir, ['daemon', 'status'])
    expect(status).toMatchObject({
      running: true,
      productVersion: expect.any(String),
      protocolVersion: CONTROL_PROTOCOL_VERSION,
    })
    expect(status.pid).toBe(readDaemonJson(dir)!.pid)
    expect(status.port).toBeGreaterThan(0)
    expect(status.uptimeMs).toBeGreaterThanOrEqual(0)
    expect(status.connectors).toEqual([expect.objectContaining({ key: 'locked', status: 'needs-auth' })])
    expect(fs.statSync(path.join(dir, 'daemon.json')).mode & 0o777).toBe(0o600)
    const stop = await tuttiJson(dir, ['daemon', 'stop'])
    expect(stop).toEqual({ stopped: true, pid: status.pid })
    expect(isAlive(status.pid)).toBe(false)
    expect(fs.existsSync(path.join(dir, 'daemon.json'))).toBe(false)
    expect(fs.existsSync(path.join(dir, 'daemon.lock'))).toBe(false)
    expect(await tuttiJson(dir, ['daemon', 'status'])).toEqual({ running: false })
    expect(await tuttiJson(dir, ['daemon', 'stop'])).toEqual({ stopped: false })
  })

  it('SIGTERM shuts down once, cleanly, and the log explains it', async () => {
    const dir = state('sigterm')
    const started = await tuttiJson(dir, ['daemon', 'start'])
    process.kill(started.pid, 'SIGTERM')
    expect(await until(() => !isAlive(started.pid))).toBe(true)
    expect(fs.existsSync(path.join(dir, 'daemon.json'))).toBe(false)
    const log = fs
      .readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(log.filter((l) => l.msg === 'daemon stopped')).toHaveLength(1)
    expect(log.find((l) => l.msg === 'daemon stopping')).toMatchObject({ reason: 'SIGTERM', component: 'daemon' })
  })

  it('with an idle timeout, a daemon nobody talks to stops by itself, and the next call starts a new one', async () => {
    const dir = state('idle')
    const env = { TUTTI_DAEMON_IDLE_TIMEOUT_SECONDS: '1' }
    const first = await tuttiJson(dir, ['daemon', 'start'], { env })
    expect(await until(() => !isAlive(first.pid))).toBe(true)
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    expect(log).toMatch(/"msg":"daemon stopping","reason":"idle for 1 s"/)
    expect(fs.existsSync(path.join(dir, 'daemon.json'))).toBe(false)
    expect((await tuttiJson(dir, ['connector', 'available'])).connectors).toEqual([])
  })

  it('`daemon run` serves in the foreground until interrupted, then cleans up', async () => {
    const dir = state('foreground')
    const child = spawnTutti(dir, ['daemon', 'run'])
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    // the line it prints once it listens, or its exit if it never does
    const listening = await new Promise<string>((resolve) => {
      let out = ''
      child.stdout.on('data', (d) => /listening on 127\.0\.0\.1:\d+/.test((out += d)) && resolve(out))
      void exited.then(() => resolve(out))
    })
    expect(listening).toMatch(/listening on 127\.0\.0\.1:\d+/)
    expect(readDaemonJson(dir)?.pid).toBe(child.pid)
    expect((await tuttiJson(dir, ['connector', 'available'])).connectors).toEqual([])
    expect(readDaemonJson(dir)?.pid).toBe(child.pid) // reused, not replaced
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(fs.existsSync(path.join(dir, 'daemon.json'))).toBe(false)
  })

  it('a second `daemon run` for the same state dir refuses to start', async () => {
    const dir = state('singleton')
    const first = await tuttiJson(dir, ['daemon', 'start'])
    const res = await tutti(dir, ['daemon', 'run'])
    expect(res.code).not.toBe(0)
    expect(daemonPids(dir)).toEqual([first.pid])
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    expect(log).toMatch(/another daemon holds the lock/)
  })
})
