import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { probeConnector } from '../support/fixture-connector.js'
import { connected, installed, uninstalled } from '../support/in-process.js'
import { cleanupState, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const SECRET = 'probe-credential-1a2b3c4d5e'

describe('CLI shims: tutti-connector-<key>', () => {
  let dir: string
  let shim: string
  const run = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
    spawnSync(shim, args, {
      input: options.input ?? '',
      encoding: 'utf8',
      env: { ...process.env, TUTTI_CONNECTOR_TOKEN: 'tutti_agent-token-not-for-connectors', ...options.env },
    })

  beforeAll(async () => {
    dir = tempStateDir('shims')
    await installed(dir, probeConnector('probe', { auth: ['SECRET_KEY'] }))
    await connected(dir, 'probe', { env: { SECRET_KEY: SECRET } })
    shim = path.join(dir, 'bin', 'tutti-connector-probe')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    "the POSIX shim and cmd-shim's .cmd and .ps1 are written; " + 'available shows the command, never the path',
    async () => {
      for (const suffix of ['', '.cmd', '.ps1']) expect(fs.existsSync(shim + suffix), suffix).toBe(true)
      const available = await tuttiJson(dir, ['connector', 'available'])
      expect(available.connectors.find((c: { key: string }) => c.key === 'probe').interfaces).toEqual([
        { kind: 'cli', command: 'tutti-connector-probe', status: 'ready' },
      ])
      expect(JSON.stringify(available)).not.toContain(dir)
    },
  )

  it('argv passes through unchanged: spaces, quotes, unicode, empty strings', () => {
    const argv = [
      'plain',
      'with space',
      '"double"',
      "'single'",
      'ünïcødé ✓',
      '',
      '--flag=value',
      '$HOME',
      '`x`',
      '\\back',
    ]
    const res = run(argv)
    expect(res.status).toBe(0)
    expect(JSON.parse(res.stdout).argv).toEqual(argv)
    expect(res.stderr).toBe('to stderr\n')
  })

  it('no wrapper process: the CLI runs as the very process the shell started', () => {
    const child = spawnSync(shim, [], { encoding: 'utf8' })
    const out = JSON.parse(child.stdout)
    // spawnSync gives no pid up front; compare via a shell that prints its own pid then execs
    const viaSh = spawnSync('sh', ['-c', `echo $$; exec "${shim}"`], { encoding: 'utf8' })
    const [shPid, json] = viaSh.stdout.split('\n')
    expect(JSON.parse(json!).pid).toBe(Number(shPid))
    expect(out.execPath).toBe(process.execPath)
  })

  it('the environment: declared credentials and the data dir in, the agent session token out', () => {
    const env = JSON.parse(run([]).stdout).env
    expect(env.SECRET_KEY).toBe(SECRET)
    expect(env.TUTTI_CONNECTOR_DATA).toBe(path.join(dir, 'connectors', 'probe', 'data'))
    expect(env.TUTTI_CONNECTOR_TOKEN).toBeUndefined()
  })

  it('stdin, stdout and stderr pass through', () => {
    const input = 'line one\nline two ✓\n'.repeat(1000)
    const res = run(['--stdin'], { input })
    expect(res.stdout).toBe(input)
    expect(res.stderr).toBe('stdin done\n')
  })

  it.each([0, 1, 42, 255])('exit code %i passes through', (code) => {
    expect(run(['--exit', String(code)]).status).toBe(code)
    expect(run(['--stdin', '--exit', String(code)]).status).toBe(code)
  })

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('%s reaches the connector process', async (signal, code) => {
    const child = spawn(shim, ['--wait', '10000'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    expect(out).toMatch(new RegExp(`^ready ${child.pid}`))
    child.kill(signal)
    const exit = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
    expect(out).toContain(`got ${signal}`)
    expect(exit).toBe(code)
  })

  it('a shim left from a de-authorized or uninstalled connector refuses to run the old release', async () => {
    // a connector of its own: the others in this file keep theirs
    await installed(dir, probeConnector('left', { auth: ['SECRET_KEY'] }))
    await connected(dir, 'left', { env: { SECRET_KEY: SECRET } })
    const left = path.join(dir, 'bin', 'tutti-connector-left')
    const copy = path.join(dir, 'bin', 'kept-copy')
    fs.copyFileSync(left, copy)
    fs.chmodSync(copy, 0o755)
    await tuttiJson(dir, ['connector', 'disconnect', 'left'])
    expect(fs.existsSync(left)).toBe(false)
    let res = spawnSync(copy, [], { encoding: 'utf8' })
    expect(res.status).not.toBe(0)
    expect(res.stdout).toBe('')
    expect(res.stderr).toMatch(/tutti-connector-left: the connector "left" is not connected \(missing SECRET_KEY\)/)
    await uninstalled(dir, 'left')
    res = spawnSync(copy, [], { encoding: 'utf8' })
    expect(res.status).not.toBe(0)
    expect(res.stdout).toBe('')
    expect(res.stderr).toContain(
      'tutti-connector-left: the connector "left" is not installed; ' +
        'this command is left over and will not run the old release',
    )
    fs.rmSync(copy)
  })

  it('an upgrade swaps the target while a long-running old invocation finishes', async () => {
    await installed(dir, probeConnector('swap', { release: 'old' }))
    const swap = path.join(dir, 'bin', 'tutti-connector-swap')
    // the old invocation runs until its stdin ends: it is still running through the whole upgrade
    const old = spawn(swap, ['--wait', 'eof'], { stdio: ['pipe', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>((resolve) => old.on('exit', resolve))
    let out = ''
    old.stdout.on('data', (d) => (out += d))
    await new Promise<void>((resolve) => old.stdout.once('data', () => resolve()))
    expect(out).toContain('ready')
    await installed(dir, probeConnector('swap', { version: '2.0.0', release: 'new' }))
    const fresh = spawnSync(swap, ['--wait', '10'], { encoding: 'utf8' })
    expect(fresh.stdout).toContain('finished new')
    old.stdin.end()
    expect(await exited).toBe(0)
    expect(out).toContain('finished old')
  })
})

describe('shims under concurrent changes', () => {
  let dir: string
  beforeAll(() => {
    // a state dir of its own: the test checks the whole bin dir
    dir = tempStateDir('shim-race')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    '20 concurrent install/uninstall operations leave ' + 'exactly the shims of the active connectors, no temp files',
    async () => {
      const keys = Array.from({ length: 10 }, (_, i) => `c${i}`)
      const sources = new Map(keys.map((k) => [k, probeConnector(k)]))
      // every key is installed; the even ones are uninstalled again, concurrently with the other installs
      await Promise.all(keys.map((k) => tutti(dir, ['connector', 'install', sources.get(k)!, '--json'])))
      const ops = keys.flatMap((k, i) =>
        i % 2 === 0
          ? [tutti(dir, ['connector', 'uninstall', k, '--json'])]
          : [tutti(dir, ['connector', 'install', probeConnector(k, { version: '1.1.0' }), '--json'])],
      )
      ops.push(
        ...keys
          .slice(0, 10)
          .map((_k, i) =>
            i % 2 === 0 ? tutti(dir, ['daemon', 'status', '--json']) : tutti(dir, ['connector', 'available', '--json']),
          ),
      )
      const results = await Promise.all(ops)
      for (const r of results) expect(r.code, r.stdout + r.stderr).toBe(0)
      const active = keys.filter((_, i) => i % 2 === 1).sort()
      const bin = fs.readdirSync(path.join(dir, 'bin')).sort()
      // beside the connector shims, only `tutti` itself (for agent sessions)
      expect(bin).toEqual(
        [
          'tutti',
          'tutti.cmd',
          ...active.flatMap((k) => [`tutti-connector-${k}`, `tutti-connector-${k}.cmd`, `tutti-connector-${k}.ps1`]),
        ].sort(),
      )
      const leftovers = fs
        .readdirSync(dir)
        .filter((n) => n.startsWith('.') || n.includes('tmp') || n.includes('staging'))
      expect(leftovers).toEqual([])
      for (const k of active)
        expect(
          spawnSync(path.join(dir, 'bin', `tutti-connector-${k}`), ['--version'], { encoding: 'utf8' }).status,
        ).toBe(0)
    },
  )
})
