import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseManifest, CLI_FILE, makeConnector } from '../support/connector-fixture.js'
import { probeConnector } from '../support/fixture-connector.js'
import {
  cleanupState,
  EXAMPLES,
  readDaemonJson,
  REPO,
  tempStateDir,
  tutti,
  tuttiEnv,
  tuttiJson,
  type RunResult,
} from '../support/tutti.js'

const SECRET = 'sk-live-4f0c2b9e-very-secret-value'

/** A connector with a secret credential, a real MCP server from npm (the memory server, on PATH) and a CLI. */
function secretConnector(key: string): string {
  const variable = `${key.toUpperCase()}_KEY`
  return makeConnector(
    {
      ...baseManifest({ key }),
      auth: { kind: 'env', variables: [{ name: variable, secret: true }] },
      mcp: {
        transport: 'stdio',
        command: 'mcp-server-memory',
        env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/m.jsonl' },
      },
    },
    CLI_FILE,
  )
}
/** The CLI through oclif, as every command but `connector available [--json]` runs (bin/oclif.js). */
function oclifEntry(dir: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(REPO, 'bin', 'oclif.js'), ...args],
      { env: tuttiEnv(dir) },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })
      },
    )
  })
}
const connect = (dir: string, key: string, secret = SECRET) =>
  tuttiJson(dir, ['connector', 'connect', key, '--env', `${key.toUpperCase()}_KEY=${secret}`])

describe('the everything example through the CLI', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('lifecycle-example')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    'install copies a read-only, content-addressed release and starts the daemon; available shows needs-auth until ' +
      'connected, then ready',
    async () => {
      const res = await tuttiJson(dir, ['connector', 'install', path.join(EXAMPLES, 'everything')])
      expect(res).toMatchObject({ key: 'everything', version: '1.0.0', changed: true, state: { status: 'needs-auth' } })
      expect(res.digest).toMatch(/^[a-f0-9]{64}$/)
      const release = path.join(dir, 'connectors', 'everything', 'releases', res.digest)
      expect(fs.statSync(release).mode & 0o777).toBe(0o555)
      expect(fs.statSync(path.join(release, 'tutti-connector.json')).mode & 0o777).toBe(0o444)
      expect(fs.statSync(path.join(release, 'bin', 'everything.js')).mode & 0o777).toBe(0o555)
      expect(fs.statSync(path.join(dir, 'installed.json')).mode & 0o777).toBe(0o600)
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(readDaemonJson(dir)).toBeDefined()

      const before = await tuttiJson(dir, ['connector', 'available'])
      expect(before.connectors[0].interfaces.map((i: { status: string }) => i.status)).toEqual([
        'needs-auth',
        'needs-auth',
      ])
      const connected = await tuttiJson(
        dir,
        ['connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY'],
        {
          env: { EVERYTHING_API_KEY: SECRET },
        },
      )
      expect(connected).toMatchObject({
        key: 'everything',
        variables: ['EVERYTHING_API_KEY'],
        state: { status: 'ready' },
      })
      expect(JSON.stringify(connected)).not.toContain(SECRET)
      expect(fs.statSync(path.join(dir, 'credentials.json')).mode & 0o777).toBe(0o600)
      expect(await tuttiJson(dir, ['connector', 'available'])).toEqual({
        connectors: [
          {
            key: 'everything',
            name: 'Everything',
            description: expect.any(String),
            skills: [{ name: 'everything-tour', title: 'Everything Tour', description: expect.any(String) }],
            interfaces: [
              {
                kind: 'mcp',
                serverName: 'connector',
                toolPrefix: 'everything_',
                status: 'ready',
                // 13, and the elicitation, URL elicitation, sampling and roots tools it offers a client that
                // declares them (tutti's does)
                tools: 17,
                schemaBytes: expect.any(Number),
              },
              { kind: 'cli', command: 'tutti-connector-everything', status: 'ready' },
            ],
          },
        ],
      })
    },
  )
})

// One daemon for the rest of the file; every test installs connectors of its own (its own keys).
describe('connector lifecycle through the CLI', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('lifecycle')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('re-installing the same content is a no-op', async () => {
    const src = probeConnector('same')
    expect((await tuttiJson(dir, ['connector', 'install', src])).changed).toBe(true)
    const before = fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')
    expect((await tuttiJson(dir, ['connector', 'install', src])).changed).toBe(false)
    expect(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).toBe(before)
  })

  it(
    'connect rejects undeclared variables, ' + 'empty values and unknown connectors with exit 2, storing nothing',
    async () => {
      await tuttiJson(dir, ['connector', 'install', probeConnector('picky', { auth: ['PICKY_KEY'] })])
      await connect(dir, 'picky')
      const creds = fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')
      const undeclared = await tutti(dir, ['connector', 'connect', 'picky', '--env', `OTHER=${SECRET}`, '--json'])
      expect(undeclared.code).toBe(2)
      expect(JSON.parse(undeclared.stdout).error).toMatchObject({
        code: 'CREDENTIAL_INVALID',
        message: expect.stringContaining('OTHER'),
      })
      expect(undeclared.stdout + undeclared.stderr).not.toContain(SECRET)
      const malformed = await tutti(dir, ['connector', 'connect', 'picky', '--env', 'novalue', '--json'])
      expect(malformed.code).toBe(2)
      const unknown = await tutti(dir, ['connector', 'connect', 'nope', '--env', 'A=b', '--json'])
      expect(unknown.code).toBe(2)
      expect(JSON.parse(unknown.stdout).error.code).toBe('CONNECTOR_NOT_INSTALLED')
      const missingEnv = await tutti(dir, [
        'connector',
        'connect',
        'picky',
        '--from-env',
        'TUTTI_TEST_UNSET_VAR',
        '--json',
      ])
      expect(missingEnv.code).toBe(2)
      expect(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')).toBe(creds)
    },
  )

  it(
    'no port, URL, token, credential or release path in `connector available`, JSON or table; ' +
      'none of them in the daemon log',
    async () => {
      await tuttiJson(dir, ['connector', 'install', secretConnector('shy')])
      expect((await connect(dir, 'shy')).state).toMatchObject({ status: 'ready' })
      const info = readDaemonJson(dir)!
      // bin/run.cjs answers these without oclif; bin/oclif.js is the oclif path: both are checked, and they print the
      // same
      const json = await tutti(dir, ['connector', 'available', '--json'])
      const table = await tutti(dir, ['connector', 'available'])
      const viaOclif = await Promise.all(
        [['--json'], []].map((flag) => oclifEntry(dir, ['connector', 'available', ...flag])),
      )
      expect(viaOclif).toEqual([json, table])
      for (const out of [json, table, ...viaOclif].map((r) => r.stdout + r.stderr)) {
        expect(out).not.toContain(SECRET)
        expect(out).not.toContain(info.controlToken)
        expect(out).not.toContain(String(info.port))
        expect(out).not.toMatch(/https?:\/\//)
        expect(out).not.toContain(dir)
        expect(out).not.toContain('releases')
        expect(out).not.toMatch(/[a-f0-9]{64}/)
      }
      expect(table.stdout).toMatch(/tutti-connector-shy/)
      const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      expect(log.length).toBeGreaterThan(0)
      expect(log).not.toContain(SECRET)
      expect(log).not.toContain(info.controlToken)
    },
  )

  it('a new version replaces the old one atomically', async () => {
    const v1 = makeConnector(baseManifest({ key: 'upgrade', version: '1.0.0' }), CLI_FILE)
    const v2 = makeConnector(baseManifest({ key: 'upgrade', version: '2.0.0' }), CLI_FILE)
    const first = await tuttiJson(dir, ['connector', 'install', v1])
    const second = await tuttiJson(dir, ['connector', 'install', v2])
    expect(second).toMatchObject({ version: '2.0.0', changed: true, previousDigest: first.digest })
    const installed = JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8'))
    expect(installed.connectors.upgrade).toMatchObject({ version: '2.0.0', digest: second.digest })
    const status = await tuttiJson(dir, ['daemon', 'status'])
    expect(status.connectors.find((c: { key: string }) => c.key === 'upgrade')).toMatchObject({
      version: '2.0.0',
      status: 'ready',
    })
  })

  it('installs from a .tgz (npm pack layout) like from a directory; a broken archive changes nothing', async () => {
    const src = makeConnector(baseManifest({ key: 'packed', version: '3.1.0' }), CLI_FILE)
    const tgz = path.join(path.dirname(src), `packed-${process.pid}.tgz`)
    const staging = fs.mkdtempSync(path.join(path.dirname(src), 'pack-'))
    fs.cpSync(src, path.join(staging, 'package'), { recursive: true })
    execFileSync('tar', ['-czf', tgz, '-C', staging, 'package'])
    const res = await tuttiJson(dir, ['connector', 'install', tgz])
    expect(res).toMatchObject({ key: 'packed', version: '3.1.0', changed: true, state: { status: 'ready' } })
    // the same content from the directory is the same release
    expect((await tuttiJson(dir, ['connector', 'install', src])).changed).toBe(false)
    // tmp/ goes again when the install made it; either way no staging copy is left
    expect(fs.existsSync(path.join(dir, 'tmp')) ? fs.readdirSync(path.join(dir, 'tmp')) : []).toEqual([])
    const before = fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')
    const broken = path.join(path.dirname(src), `broken-${process.pid}.tgz`)
    fs.writeFileSync(broken, 'not gzip at all')
    const bad = await tutti(dir, ['connector', 'install', broken, '--json'])
    expect(bad.code).toBe(2)
    expect(JSON.parse(bad.stdout).error.message).toMatch(/could not be unpacked/)
    expect(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).toBe(before)
    // tmp/ goes again when the install made it; either way no staging copy is left
    expect(fs.existsSync(path.join(dir, 'tmp')) ? fs.readdirSync(path.join(dir, 'tmp')) : []).toEqual([])
  })

  it('a connector uninstalled while no daemon ran leaves only its data behind once a daemon starts', async () => {
    await tuttiJson(dir, ['connector', 'install', makeConnector(baseManifest({ key: 'offline' }), CLI_FILE)])
    await tuttiJson(dir, ['daemon', 'stop'])
    const { ConnectorStore } = await import('../../src/runtime/store/connector-store.js')
    const { statePaths } = await import('../../src/runtime/paths.js')
    // data of its own: an empty data directory goes with the connector
    fs.writeFileSync(path.join(dir, 'connectors', 'offline', 'data', 'notes.txt'), 'kept\n')
    await new ConnectorStore(statePaths(dir)).uninstall('offline')
    expect(fs.existsSync(path.join(dir, 'connectors', 'offline'))).toBe(true)
    await tuttiJson(dir, ['daemon', 'start'])
    expect(fs.readdirSync(path.join(dir, 'connectors', 'offline'))).toEqual(['data'])
    expect(fs.existsSync(path.join(dir, 'bin', 'tutti-connector-offline'))).toBe(false)
  })

  it('disconnect forgets credentials; uninstall removes the connector but keeps its data unless --purge', async () => {
    await tuttiJson(dir, ['connector', 'install', probeConnector('leaving', { auth: ['LEAVING_KEY'] })])
    await tuttiJson(dir, ['connector', 'install', probeConnector('purged')])
    // a credential of its own: other tests' connectors may hold SECRET in the same credentials.json
    const secret = `${SECRET}-leaving`
    await connect(dir, 'leaving', secret)
    expect(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')).toContain(secret)
    const disc = await tuttiJson(dir, ['connector', 'disconnect', 'leaving'])
    expect(disc).toMatchObject({ disconnected: true, state: { status: 'needs-auth' } })
    expect(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')).not.toContain(secret)
    // data of their own: an empty data directory goes with the connector
    for (const key of ['leaving', 'purged']) {
      fs.writeFileSync(path.join(dir, 'connectors', key, 'data', 'notes.txt'), 'mine\n')
    }
    expect(await tuttiJson(dir, ['connector', 'uninstall', 'leaving'])).toMatchObject({
      uninstalled: true,
      data: 'kept',
      dataDir: path.join(dir, 'connectors', 'leaving', 'data'),
    })
    expect(await tuttiJson(dir, ['connector', 'uninstall', 'purged', '--purge'])).toMatchObject({
      uninstalled: true,
      data: 'purged',
    })
    // other tests' connectors may share this daemon: these two are gone from both views
    const keys = (list: Array<{ key: string }>) => list.map((c) => c.key)
    for (const listed of [
      keys((await tuttiJson(dir, ['connector', 'available'])).connectors),
      keys((await tuttiJson(dir, ['daemon', 'status'])).connectors),
    ]) {
      expect(listed).not.toContain('leaving')
      expect(listed).not.toContain('purged')
    }
    expect(fs.readdirSync(path.join(dir, 'connectors', 'leaving'))).toEqual(['data'])
    expect(fs.existsSync(path.join(dir, 'connectors', 'purged'))).toBe(false)
    const again = await tutti(dir, ['connector', 'uninstall', 'leaving', '--json'])
    expect(again.code).toBe(2)
    expect(JSON.parse(again.stdout).error.code).toBe('CONNECTOR_NOT_INSTALLED')
  })
})
