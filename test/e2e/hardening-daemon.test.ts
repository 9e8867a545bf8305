import { CONTROL_PROTOCOL_VERSION } from '../../src/runtime/control-protocol/version.js'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { makeConnector } from '../support/connector-fixture.js'
import { eventually, until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared, uninstalled } from '../support/in-process.js'
import { legacyClient, modernClient, rawRequest } from '../support/mcp-clients.js'
import {
  cleanupState,
  connectorState,
  daemonPids,
  isAlive,
  readDaemonJson,
  tempStateDir,
  tutti,
  tuttiJson,
} from '../support/tutti.js'

/**
 * Hostile upstreams and stale state against the real daemon. After every
 * attack, a bystander connector must still be listed and callable in both
 * eras: one bad connector never breaks `tools/list` for everyone.
 */
describe('hardening: the daemon', () => {
  let dir: string
  const prepare = ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'hardening']
  /**
   * The session is prepared in-process, or through the CLI where the test is about what the next command does with
   * the state files.
   */
  const bystanderIsFine = async (through: 'in-process' | 'cli' = 'in-process') => {
    const binding =
      through === 'cli'
        ? (await tuttiJson(dir, prepare)).mcpServers[0]
        : (await prepared(dir, { workspace: 'w', session: 'hardening' })).mcpServers[0]!
    for (const make of [modernClient, legacyClient]) {
      const client = await make(binding)
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toContain('bystander_echo')
      expect((await client.callTool({ name: 'bystander_echo', arguments: { message: 'still here' } })).content).toEqual(
        [{ type: 'text', text: 'still here' }],
      )
      await client.close()
    }
  }
  const state = (key: string) => connectorState(dir, key)
  beforeAll(async () => {
    dir = tempStateDir('hardening')
    await installed(dir, faultConnector({ key: 'bystander' }))
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    'an upstream tool nested 10,000 levels deep fails its own connector with the reason; tools/list stays 200 for ' +
      'everyone, also after a restart',
    async () => {
      // 10,000 levels: past what the SDK's checks survive, so the answer itself is refused
      const res = await tutti(dir, [
        'connector',
        'install',
        faultConnector({ key: 'deep', env: { FIXTURE_DEEP_SCHEMA: '10000' } }),
        '--json',
      ])
      expect(res.code).toBe(1)
      expect(JSON.parse(res.stdout).error.message).toMatch(
        /tools\/list failed: the upstream's answer nests deeper than 512 levels/,
      )
      expect(await state('deep')).toMatchObject({ status: 'failed', tools: 0, generation: 0 })
      await bystanderIsFine()
      // 100 levels: a valid answer, but past the registry's schema depth
      const again = await tutti(dir, [
        'connector',
        'install',
        faultConnector({ key: 'deep', version: '1.0.1', env: { FIXTURE_DEEP_SCHEMA: '100' } }),
        '--json',
      ])
      expect(again.code).toBe(1)
      expect(JSON.parse(again.stdout).error.message).toMatch(/tool "deep": inputSchema nests deeper than 64 levels/)
      expect(await state('deep')).toMatchObject({ status: 'failed', tools: 0, generation: 0 })
      await bystanderIsFine()
      await tuttiJson(dir, ['daemon', 'stop'])
      await bystanderIsFine()
      await uninstalled(dir, 'deep', { purge: true })
    },
  )

  it('declared tools past a limit are an install error naming the field, and change nothing', async () => {
    let schema: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 40; i++) schema = { type: 'object', properties: { next: schema } }
    const src = faultConnector({
      key: 'declared',
      manifest: {
        mcp: {
          transport: 'stdio',
          command: 'node',
          args: ['server.mjs'],
          activation: 'lazy',
          tools: [{ name: 'deep', inputSchema: schema }],
        },
      },
    })
    const before = fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')
    const res = await tutti(dir, ['connector', 'install', src, '--json'])
    expect(res.code).toBe(2)
    expect(JSON.parse(res.stdout).error.message).toMatch(/mcp\.tools\[0\]\.inputSchema: nests deeper than 64 levels/)
    expect(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).toBe(before)
  })

  describe('stale state files never get an unrelated process signalled', () => {
    let bystander: ChildProcess
    let other: string
    beforeAll(() => {
      bystander = spawn('sleep', ['600'], { stdio: 'ignore' })
      other = tempStateDir('hardening-other')
    })
    afterAll(async () => {
      bystander.kill('SIGKILL')
      await cleanupState(other)
    })

    it(
      'a daemon.json naming an unrelated pid: `daemon stop` and the next command leave that process alone, and the ' +
        'file is cleaned up',
      async () => {
        await tuttiJson(dir, ['daemon', 'stop'])
        const forged = {
          pid: bystander.pid,
          port: 9,
          productVersion: '0.1.0',
          protocolVersion: CONTROL_PROTOCOL_VERSION,
          startedAt: new Date().toISOString(),
          controlToken: 'x'.repeat(43),
          nonce: 'f'.repeat(32),
        }
        fs.writeFileSync(path.join(dir, 'daemon.json'), JSON.stringify(forged), { mode: 0o600 })
        fs.writeFileSync(path.join(dir, 'daemon.pid'), `${bystander.pid}\n`)
        const stop = await tutti(dir, ['daemon', 'stop'])
        expect(stop.stdout).toMatch(/not running; removed a stale daemon\.json/)
        expect(isAlive(bystander.pid!)).toBe(true)
        expect(fs.existsSync(path.join(dir, 'daemon.json'))).toBe(false)
        fs.writeFileSync(path.join(dir, 'daemon.json'), JSON.stringify(forged), { mode: 0o600 })
        await bystanderIsFine('cli')
        expect(isAlive(bystander.pid!)).toBe(true)
        expect(readDaemonJson(dir)!.pid).not.toBe(bystander.pid)
      },
    )

    it("another state dir's daemon.json: its daemon is neither stopped nor signalled", async () => {
      await tuttiJson(other, ['daemon', 'start'])
      const otherPid = readDaemonJson(other)!.pid
      await tuttiJson(dir, ['daemon', 'stop'])
      fs.copyFileSync(path.join(other, 'daemon.json'), path.join(dir, 'daemon.json'))
      const stop = await tutti(dir, ['daemon', 'stop'])
      expect(stop.stdout).toMatch(/serves another state directory/)
      expect(isAlive(otherPid)).toBe(true)
      expect((await tuttiJson(other, ['daemon', 'status'])).pid).toBe(otherPid)
      await bystanderIsFine('cli')
      expect(isAlive(otherPid)).toBe(true)
    })
  })

  it('connector keys are checked at every entry: the control API and the CLI', async () => {
    await tuttiJson(dir, ['daemon', 'start'])
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-outside-'))
    fs.writeFileSync(path.join(outside, 'keep'), 'x')
    const info = readDaemonJson(dir)!
    const rel = path.relative(path.join(dir, 'connectors', 'x'), outside)
    const res = await rawRequest(`http://127.0.0.1:${info.port}/control/reconcile`, {
      headers: {
        host: `127.0.0.1:${info.port}`,
        authorization: `Bearer ${info.controlToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ keys: [rel] }),
    })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toMatch(/keys\.0: must match/)
    expect(fs.existsSync(path.join(outside, 'keep'))).toBe(true)
    for (const [args, code] of [
      [['connector', 'uninstall', '__proto__'], 'ARGUMENT_INVALID'],
      [['connector', 'connect', 'constructor', '--env', 'A=b'], 'CONNECTOR_NOT_INSTALLED'],
      [['connector', 'disconnect', 'hasOwnProperty'], 'ARGUMENT_INVALID'],
      [['connector', 'uninstall', 'toString'], 'ARGUMENT_INVALID'],
      [['connector', 'uninstall', 'valueof'], 'CONNECTOR_NOT_INSTALLED'],
    ] as const) {
      const r = await tutti(dir, [...args, '--json'])
      expect(r.code, args.join(' ')).toBe(2)
      expect(JSON.parse(r.stdout).error.code, args.join(' ')).toBe(code)
    }
    fs.rmSync(outside, { recursive: true, force: true })
  })

  it(
    'after kill -9 of the daemon, a server that ignores stdin EOF dies with it, and its grandchild is reaped by ' +
      'the next daemon',
    async () => {
      const res = await installed(
        dir,
        faultConnector({ key: 'stubborn', env: { FIXTURE_STUBBORN: '1', FIXTURE_GRANDCHILD: '1' } }),
      )
      const serverPid = res.state.pid
      expect(fs.existsSync(path.join(dir, 'upstreams', `${serverPid}.json`))).toBe(true)
      const [grandchild] = await eventually(
        () => groupMembers(serverPid).filter((p) => p !== serverPid),
        (m) => m.length === 1,
      )
      expect(grandchild).toBeDefined()
      const daemonPid = readDaemonJson(dir)!.pid
      process.kill(daemonPid, 'SIGKILL')
      expect(await until(() => !isAlive(serverPid))).toBe(true)
      expect(isAlive(grandchild!)).toBe(true)
      await bystanderIsFine()
      expect(await until(() => !isAlive(grandchild!))).toBe(true)
      expect(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')).toMatch(
        new RegExp(`reaped upstream processes a previous daemon left running.*${grandchild}`),
      )
      await uninstalled(dir, 'stubborn', { purge: true })
    },
  )

  it('an upstream that initializes and then exits is restarted with a real backoff, shown in status', async () => {
    await tutti(dir, [
      'connector',
      'install',
      faultConnector({ key: 'flaky', activation: 'eager', env: { FIXTURE_EXIT_AFTER_MS: '300' } }),
      '--no-wait',
    ])
    const flaky = await eventually(
      () => state('flaky'),
      (s) => (s?.restarts ?? 0) >= 4,
      60_000,
    )
    expect(flaky.restarts).toBeGreaterThanOrEqual(4)
    const delays = fs
      .readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"restart scheduled"') && l.includes('"connector":"flaky"'))
      .map((l) => JSON.parse(l).delayMs)
    // each quick exit counts: 250, 500, 1000, 2000 … (no reset by a start that does not last)
    expect(delays.slice(0, 4)).toEqual([250, 500, 1000, 2000])
    const status = await tutti(dir, ['daemon', 'status'])
    expect(status.stdout).toMatch(/flaky 1\.0\.0: .*restarts/)
    await uninstalled(dir, 'flaky', { purge: true })
  })

  it('a failed first start is retried with the same backoff; status shows the next retry', async () => {
    const src = makeConnector({
      schemaVersion: 1,
      key: 'dead',
      name: 'Dead',
      version: '1.0.0',
      mcp: { transport: 'stdio', command: 'node', args: ['-e', 'process.exit(2)'] },
    })
    expect((await tutti(dir, ['connector', 'install', src])).code).toBe(1)
    const dead = await eventually(
      () => state('dead'),
      (s) => (s?.restarts ?? 0) >= 2 && !!s?.nextRetryAt,
    )
    expect(dead).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/exited with code 2 before it answered initialize/),
      nextRetryAt: expect.any(String),
    })
    expect((await tutti(dir, ['daemon', 'status'])).stdout).toMatch(/dead 1\.0\.0: failed[\s\S]*next retry: /)
    await uninstalled(dir, 'dead', { purge: true })
  })

  it(
    'garbage on an upstream stdout breaks its connection, with the reason; ' + 'others are not slowed to a halt',
    async () => {
      await tutti(dir, [
        'connector',
        'install',
        faultConnector({ key: 'noisy', env: { FIXTURE_GARBAGE: '100' } }),
        '--no-wait',
      ])
      const noisy = await eventually(
        () => state('noisy'),
        (s) => /not JSON-RPC/.test(s?.lastError ?? ''),
        60_000,
      )
      expect(noisy.lastError).toMatch(
        /more than 1000 lines on stdout that are not JSON-RPC within 10 s \(first: "garbage garbage/,
      )
      await bystanderIsFine()
      await uninstalled(dir, 'noisy', { purge: true })
    },
  )

  it('a corrupt credentials.json is named without quoting what it holds', async () => {
    await installed(
      dir,
      makeConnector(
        {
          schemaVersion: 1,
          key: 'locked',
          name: 'L',
          version: '1',
          auth: { kind: 'env', variables: [{ name: 'L_KEY' }] },
          cli: { entrypoint: 'c.js' },
        },
        { 'c.js': 'console.log(1)\n' },
      ),
    )
    const file = path.join(dir, 'credentials.json')
    const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined
    fs.writeFileSync(file, '{"schemaVersion":1,"connectors":{"locked":{"L_KEY":"corrupt-secret-4711"', { mode: 0o600 })
    const res = await tutti(dir, ['connector', 'connect', 'locked', '--env', 'L_KEY=new-value-1234', '--json'])
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout).error).toMatchObject({
      code: 'STATE_CORRUPT',
      message: expect.stringContaining('credentials.json is not valid JSON'),
    })
    expect(res.stdout + res.stderr).not.toContain('corrupt-secret')
    if (before === undefined) fs.rmSync(file)
    else fs.writeFileSync(file, before, { mode: 0o600 })
  })

  it('daemon.log stays NDJSON when a client aborts mid-body', async () => {
    const token = (await prepared(dir, { workspace: 'w', session: 'aborts' })).env.TUTTI_CONNECTOR_TOKEN
    const info = readDaemonJson(dir)!
    await new Promise<void>((resolve) => {
      const socket = net.connect(info.port, '127.0.0.1', () => {
        socket.write(
          `POST /mcp/connector HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\n` +
            `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
            `Content-Length: 5000\r\n\r\n{"jsonrpc":"2.0",`,
        )
        setImmediate(() => socket.destroy())
        socket.on('close', () => resolve())
      })
    })
    await bystanderIsFine()
    for (const line of fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').split('\n').filter(Boolean))
      expect(() => JSON.parse(line), line).not.toThrow()
  })

  afterEach(() => {
    expect(daemonPids(dir).length).toBeLessThanOrEqual(1)
  })
})

/** Live members of a process group. */
function groupMembers(pgid: number): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(name))
    } catch {
      // gone
    }
  }
  return out
}
