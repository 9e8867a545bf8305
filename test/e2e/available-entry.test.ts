import { execFile } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leanArgv, OCLIF_DIRNAME, oclifNeeded, oclifUserPlugins } from '../../src/cli/available-entry.js'
import { processStartTicks } from '../../src/runtime/proc/pid.js'
import { CONTROL_PROTOCOL_VERSION } from '../../src/runtime/control-protocol/version.js'
import { PRODUCT_VERSION } from '../../src/runtime/version.js'
import { baseManifest, CLI_FILE, makeConnector, skill } from '../support/connector-fixture.js'
import { probeConnector } from '../support/fixture-connector.js'
import { cleanupState, readDaemonJson, REPO, tempStateDir, tuttiEnv, tuttiJson } from '../support/tutti.js'

// bin/run.cjs (package.json's bin) answers `connector available [--json]`
// itself, from the CommonJS bundle the build makes; bin/oclif.js is the oclif
// path every other command takes. Both are run over the same argv, state and
// environment, and must print the same bytes and exit the same way.
const LEAN = path.join(REPO, 'bin', 'run.cjs')
const OCLIF = path.join(REPO, 'bin', 'oclif.js')
// a credential value stored in credentials.json that the daemon has never been told about
const GHOST = 'ghost-credential-7f3a9c1e55'
// loaded before the entry: records at exit whether oclif was loaded at all, and whether the lean bundle answered
const PROBE = `data:text/javascript,${encodeURIComponent(
  "import { createRequire } from 'node:module'; import fs from 'node:fs'; " +
    'const r = createRequire(process.execPath); ' +
    "process.on('exit', () => { const loaded = Object.keys(r.cache); " +
    'fs.writeFileSync(process.env.OCLIF_PROBE_FILE, JSON.stringify({ ' +
    "oclif: loaded.some((k) => k.includes('@oclif')), bundle: loaded.some((k) => k.endsWith('available-lean.cjs')) " +
    '})) })',
)}`

interface Answer {
  code: number
  stdout: string
  stderr: string
  oclif: boolean
  /** The lean answer came from dist/cli/available-lean.cjs (no ES module loader). */
  bundle: boolean
}

let probes = 0
function answer(bin: string, stateDir: string, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Answer> {
  const probeFile = path.join(os.tmpdir(), `tutti-oclif-probe-${process.pid}-${++probes}`)
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', PROBE, bin, ...argv],
      { env: tuttiEnv(stateDir, { OCLIF_PROBE_FILE: probeFile, ...env }) },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0
        // no file: the probe did not run, and the comparison fails on it
        const probed = fs.existsSync(probeFile)
          ? (JSON.parse(fs.readFileSync(probeFile, 'utf8')) as { oclif: boolean; bundle: boolean })
          : undefined
        fs.rmSync(probeFile, { force: true })
        resolve({
          code,
          stdout,
          stderr,
          oclif: probed?.oclif ?? ('no probe' as unknown as boolean),
          bundle: probed?.bundle ?? ('no probe' as unknown as boolean),
        })
      },
    )
  })
}

/** Both entries, the lean one first; the lean one must not have loaded oclif when `lean`, and must have otherwise. */
async function both(stateDir: string, argv: string[], lean: boolean, env: NodeJS.ProcessEnv = {}): Promise<Answer> {
  const [viaRun, viaOclif] = await Promise.all([answer(LEAN, stateDir, argv, env), answer(OCLIF, stateDir, argv, env)])
  compare(viaRun, viaOclif, argv, lean)
  return viaRun
}

// oclif's own warnings name the process (`(node:1234) [UnparsedCommand] …` under NODE_ENV=test)
const printed = (a: Answer) => ({
  code: a.code,
  stdout: a.stdout,
  stderr: a.stderr.replace(/^\(node:\d+\)/gm, '(node:<pid>)'),
})

function compare(viaRun: Answer, viaOclif: Answer, argv: string[], lean: boolean): void {
  const label = `${argv.join(' ')}: ${viaOclif.stdout}${viaOclif.stderr}`
  expect(viaOclif.oclif, label).toBe(true)
  expect(viaRun.oclif, label).toBe(!lean)
  // `npm run build` bundles after tsc: the lean answer is the bundle's (which may also decline, and oclif answers)
  if (lean) expect(viaRun.bundle, label).toBe(true)
  expect(printed(viaRun), label).toEqual(printed(viaOclif))
}

const TABLE = ['connector', 'available']
const JSON_FLAG = ['connector', 'available', '--json']

describe('the lean `connector available` entry answers exactly as oclif does', () => {
  let dir: string
  beforeAll(async () => {
    dir = tempStateDir('lean-entry')
    const odd = makeConnector(
      // control characters the table escapes and --json keeps, and the stored credential's value
      {
        ...baseManifest({
          key: 'odd',
          name: 'Odd \u001b[2J name',
          description: `rings \u0007, returns\r, flips \u202e; mentions ${GHOST}`,
          skills: 'skills',
        }),
      },
      { ...CLI_FILE, 'skills/odd-skill/SKILL.md': skill('odd-skill', `A skill that quotes ${GHOST}`) },
    )
    await tuttiJson(dir, ['connector', 'install', odd])
    await tuttiJson(dir, ['connector', 'install', probeConnector('locked', { auth: ['LOCKED_KEY'] })])
    // written behind the daemon's back: only the CLI knows this value is a secret
    const file = path.join(dir, 'credentials.json')
    const doc = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : { schemaVersion: 1, connectors: {} }
    doc.connectors.ghost = { GHOST_KEY: GHOST }
    fs.writeFileSync(file, JSON.stringify(doc), { mode: 0o600 })
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    'the table and --json of a warm daemon: same bytes, control characters escaped in the table only, the stored ' +
      'secret redacted',
    async () => {
      const table = await both(dir, TABLE, true)
      expect(table.code).toBe(0)
      expect(table.stderr).toBe('')
      expect(table.stdout).toMatch(/^CONNECTOR/)
      expect(table.stdout).toContain('Odd \\x1b[2J name (odd)')
      expect(table.stdout).toContain('tutti-connector-locked')
      const json = await both(dir, JSON_FLAG, true)
      expect(json.code).toBe(0)
      const parsed = JSON.parse(json.stdout)
      expect(parsed.connectors.find((c: { key: string }) => c.key === 'odd').name).toBe('Odd \u001b[2J name')
      for (const out of [table, json]) {
        expect(out.stdout + out.stderr).not.toContain(GHOST)
        expect(out.stdout).toContain('[redacted]')
      }
    },
  )

  it.each([
    [['connector', 'available', '--help']],
    [['connector', 'available', '-h']],
    [['connector', 'available', '--jsn']],
    [['connector', 'available', '--JSON']],
    [['connector', 'available', '--json=true']],
    [['connector', 'available', 'extra']],
    [['connector', 'available', '--json', 'extra']],
    [['connector', 'available', '--json', '--json']],
    [['connector', 'available', '--', '--json']],
    [['connector', 'availabel']],
    [['connector', 'availabel', '--json']],
    [['connector:available']],
    [['connector']],
    [['--json', 'connector', 'available']],
  ])('%j goes to oclif unchanged', async (argv) => {
    await both(dir, argv, false)
  })

  it.each([
    ['TUTTI_CONTENT_TYPE', 'json'],
    ['TUTTI_DEBUG', '0'],
    ['DEBUG', 'nothing-of-oclif'],
    ['CLI_FLAGS_DEBUG', '0'],
    ['TUTTI_REDIRECTED', '1'],
  ])('with %s set, oclif answers', async (name, value) => {
    const table = await both(dir, TABLE, false, { [name]: value })
    await both(dir, JSON_FLAG, false, { [name]: value })
    if (name === 'TUTTI_CONTENT_TYPE') expect(JSON.parse(table.stdout).connectors).toBeDefined()
  })

  it('with oclif user plugins possibly installed (its data dir holds a package.json), oclif answers', async () => {
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-oclif-data-'))
    fs.writeFileSync(path.join(data, 'package.json'), JSON.stringify({ private: true, oclif: { plugins: [] } }))
    try {
      await both(dir, JSON_FLAG, false, { TUTTI_DATA_DIR: data })
    } finally {
      fs.rmSync(data, { recursive: true, force: true })
    }
  })

  it.each(['production', 'development', 'test'])('NODE_ENV=%s changes nothing', async (value) => {
    await both(dir, TABLE, true, { NODE_ENV: value })
    await both(dir, JSON_FLAG, true, { NODE_ENV: value })
  })
})

describe('the lean entry with no daemon, a daemon that does not answer, a failing request', () => {
  it('no daemon running: each entry forks one, as before, and answers the same', async () => {
    const cold = tempStateDir('lean-cold')
    try {
      for (const argv of [TABLE, JSON_FLAG]) {
        const viaRun = await answer(LEAN, cold, argv)
        const first = readDaemonJson(cold)
        expect(first, 'the lean entry forked a daemon').toBeDefined()
        await tuttiJson(cold, ['daemon', 'stop'])
        expect(readDaemonJson(cold)).toBeUndefined()
        const viaOclif = await answer(OCLIF, cold, argv)
        expect(readDaemonJson(cold)!.pid).not.toBe(first!.pid)
        await tuttiJson(cold, ['daemon', 'stop'])
        compare(viaRun, viaOclif, argv, true)
        expect(viaRun.code).toBe(0)
      }
    } finally {
      await cleanupState(cold)
    }
  })

  it('a state directory that cannot be created: the same INTERNAL error, exit 1', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lean-file-'))
    fs.writeFileSync(path.join(parent, 'file'), '')
    try {
      for (const argv of [TABLE, JSON_FLAG]) {
        const viaRun = await answer(LEAN, path.join(parent, 'file', 'state'), argv)
        compare(viaRun, await answer(OCLIF, path.join(parent, 'file', 'state'), argv), argv, true)
        expect(viaRun.code).toBe(1)
      }
    } finally {
      fs.rmSync(parent, { recursive: true, force: true })
    }
  })

  describe('a daemon.json naming this live process, whose port answers as the test says', () => {
    let state: string
    let server: http.Server
    let reply: (name: string, res: http.ServerResponse) => void
    /** Health as this state dir's proven daemon of our version; `available` answered by the test. */
    let healthy: (name: string, res: http.ServerResponse, available: (res: http.ServerResponse) => void) => void
    const send = (res: http.ServerResponse, status: number, body: string) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(body)
    const controlToken = 'c'.repeat(48)
    beforeAll(async () => {
      state = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lean-fake-'))
      fs.chmodSync(state, 0o700)
      server = http.createServer((req, res) => {
        req.resume()
        req.on('end', () => reply(req.url!.replace('/control/', ''), res))
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const nonce = 'n'.repeat(32)
      const info = {
        pid: process.pid,
        port: (server.address() as AddressInfo).port,
        productVersion: PRODUCT_VERSION,
        protocolVersion: CONTROL_PROTOCOL_VERSION,
        startedAt: new Date().toISOString(),
        controlToken,
        nonce,
        processStart: processStartTicks(process.pid),
      }
      fs.writeFileSync(path.join(state, 'daemon.json'), JSON.stringify(info), { mode: 0o600 })
      fs.writeFileSync(
        path.join(state, 'credentials.json'),
        JSON.stringify({ schemaVersion: 1, connectors: { ghost: { GHOST_KEY: GHOST } } }),
        { mode: 0o600 },
      )
      const health = {
        pid: process.pid,
        productVersion: PRODUCT_VERSION,
        protocolVersion: CONTROL_PROTOCOL_VERSION,
        stateDir: state,
        startedAt: info.startedAt,
        nonce,
        processStart: info.processStart,
      }
      healthy = (name, res, available) => (name === 'health' ? send(res, 200, JSON.stringify(health)) : available(res))
    })
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve))
      fs.rmSync(state, { recursive: true, force: true })
    })

    const sequentially = async (argv: string[], lean = true) => {
      const viaRun = await answer(LEAN, state, argv)
      compare(viaRun, await answer(OCLIF, state, argv), argv, lean)
      expect(viaRun.stdout + viaRun.stderr).not.toContain(GHOST)
      expect(viaRun.stdout + viaRun.stderr).not.toContain(controlToken)
      return viaRun
    }

    it(
      'health answered with something that is not JSON: ' + 'DAEMON_UNREACHABLE, exit 1, nothing signalled or spawned',
      async () => {
        reply = (_name, res) => send(res, 200, 'not json')
        for (const argv of [TABLE, JSON_FLAG]) {
          const out = await sequentially(argv)
          expect(out.code).toBe(1)
          expect(out.stdout + out.stderr).toMatch(/the daemon does not answer/)
        }
        expect(fs.existsSync(path.join(state, 'daemon.log'))).toBe(false)
      },
    )

    it('an answer that carries a secret the daemon did not know: redacted on both paths', async () => {
      const result = {
        connectors: [
          {
            key: 'ghost',
            name: 'Ghost',
            description: `holds ${GHOST}`,
            skills: [],
            interfaces: [
              { kind: 'cli', command: 'tutti-connector-ghost', status: 'failed', reason: `echoed ${GHOST}` },
            ],
          },
        ],
      }
      reply = (name, res) => healthy(name, res, (r) => send(r, 200, JSON.stringify(result)))
      for (const argv of [TABLE, JSON_FLAG]) {
        const out = await sequentially(argv)
        expect(out.code).toBe(0)
        expect(out.stdout).toContain('holds [redacted]')
      }
    })

    it.each([
      ['a failure', 500, { error: { code: 'UPSTREAM_FAILED', message: `upstream said ${GHOST}` } }, 1],
      ['bad input', 400, { error: { code: 'CONNECTOR_NOT_INSTALLED', message: 'no such connector' } }, 2],
      ['an unknown code', 500, { error: { code: 'SOMETHING_NEW', message: 'what is this' } }, 1],
      ['no error body', 503, { busy: true }, 1],
    ])('a request that fails (%s): the same error text, redacted, and exit code', async (_what, status, body, code) => {
      reply = (name, res) => healthy(name, res, (r) => send(r, status, JSON.stringify(body)))
      for (const argv of [TABLE, JSON_FLAG]) expect((await sequentially(argv)).code).toBe(code)
    })

    it('an answer that is not JSON: DAEMON_PROTOCOL, exit 1', async () => {
      reply = (name, res) => healthy(name, res, (r) => send(r, 200, '<html>'))
      const out = await sequentially(JSON_FLAG)
      expect(JSON.parse(out.stdout).error.code).toBe('DAEMON_PROTOCOL')
    })
  })
})

describe('what the lean entry assumes of oclif', () => {
  it('package.json adds no oclif plugin or hook beyond command_not_found, and names the directory it scopes by', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'))
    // a plugin or another hook could change what `connector available` prints: the lean entry would have to defer to it
    // helpClass shapes only `help` output (unknown subjects, hidden topics), never what `available` prints
    const keys = ['bin', 'commands', 'dirname', 'helpClass', 'hooks', 'topicSeparator', 'topics']
    expect(Object.keys(pkg.oclif).sort()).toEqual(keys)
    expect(Object.keys(pkg.oclif.hooks)).toEqual(['command_not_found'])
    expect(pkg.oclif.dirname).toBe(OCLIF_DIRNAME)
    expect(pkg.oclif.bin).toBe(OCLIF_DIRNAME)
  })

  it('answers only the exact argv; defers for the variables and the user plugins file', () => {
    expect(leanArgv(TABLE)).toEqual({ json: false })
    expect(leanArgv(JSON_FLAG)).toEqual({ json: true })
    for (const argv of [
      ['connector'],
      ['connector', 'available', '-h'],
      ['connector', 'available', '--json', '--json'],
      ['available', 'connector'],
    ])
      expect(leanArgv(argv), argv.join(' ')).toBeUndefined()
    const home = { HOME: '/home/u', SHELL: '/bin/sh' }
    expect(oclifUserPlugins(home, 'linux')).toBe('/home/u/.local/share/tutti/package.json')
    expect(oclifUserPlugins({ ...home, XDG_DATA_HOME: '/x' }, 'linux')).toBe('/x/tutti/package.json')
    expect(oclifUserPlugins({ ...home, TUTTI_DATA_DIR: '/d' }, 'linux')).toBe('/d/package.json')
    expect(oclifNeeded({ ...home, HOME: os.tmpdir() })).toBeUndefined()
    expect(oclifNeeded({ ...home, TUTTI_CONTENT_TYPE: 'json' })).toMatch(/TUTTI_CONTENT_TYPE/)
    expect(oclifNeeded({ ...home, TUTTI_CONTENT_TYPE: '' })).toBeUndefined()
  })
})
