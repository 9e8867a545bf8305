import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeConnector } from '../support/connector-fixture.js'
import { installed, prepared, uninstalled } from '../support/in-process.js'
import { modernClient } from '../support/mcp-clients.js'
import {
  BIN,
  cleanupState,
  NPM_BIN,
  readDaemonJson,
  snapshotTree,
  tempStateDir,
  tutti,
  tuttiJson,
} from '../support/tutti.js'

/**
 * What a real user's machine does to tutti: a daemon first started by a
 * bare environment, commands found only on the installing shell's PATH,
 * servers that crash (and print their secrets), settings, and a session
 * whose PATH alone must run `tutti`.
 */
const SECRET = 'crash-secret-7d3f9a1c'
const NODE_DIR = path.dirname(process.execPath)
/** A shell that has node and the system, and nothing of this repository (no node_modules/.bin). */
const PLAIN_PATH = [NODE_DIR, '/usr/bin', '/bin'].join(path.delimiter)

function environOf(pid: number): Record<string, string> {
  const pairs = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]))
}

describe("a real user's machine", () => {
  let dir: string
  let onlyHere: string
  beforeAll(() => {
    dir = tempStateDir('user')
    // a command that exists only on the installing shell's PATH: the real npm memory server under another name
    onlyHere = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-only-here-'))
    fs.symlinkSync(path.join(NPM_BIN, 'mcp-server-memory'), path.join(onlyHere, 'memory-only-here'))
  })
  const bareDirs: string[] = []
  afterAll(async () => {
    for (const d of [dir, ...bareDirs]) await cleanupState(d)
    fs.rmSync(onlyHere, { recursive: true, force: true })
  })

  it(
    'a daemon first forked by `env -i` still runs a connector ' + 'whose command only the installing shell can find',
    async () => {
      // a state dir of its own: this daemon must be the first one, started by the bare environment
      const dir = tempStateDir('user-bare')
      bareDirs.push(dir)
      const bare = spawnSync(process.execPath, [BIN, 'connector', 'available', '--json'], {
        env: { PATH: '/usr/bin:/bin', TUTTI_STATE_DIR: dir },
        encoding: 'utf8',
      })
      expect(bare.status, bare.stderr).toBe(0)
      const daemonPid = readDaemonJson(dir)!.pid
      expect(environOf(daemonPid).PATH).toBe('/usr/bin:/bin')
      expect(environOf(daemonPid).HOME).toBeUndefined()
      const src = makeConnector({
        schemaVersion: 1,
        key: 'here',
        name: 'Here',
        version: '1.0.0',
        mcp: {
          transport: 'stdio',
          command: 'memory-only-here',
          env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/m.jsonl' },
        },
      })
      const shell = { PATH: `${onlyHere}${path.delimiter}${PLAIN_PATH}` }
      const res = await tuttiJson(dir, ['connector', 'install', src], { env: shell })
      expect(res.state).toMatchObject({ status: 'ready', command: path.join(onlyHere, 'memory-only-here') })
      // the same daemon serves it: nothing was restarted to pick up a PATH
      expect(readDaemonJson(dir)!.pid).toBe(daemonPid)
      const status = await tuttiJson(dir, ['daemon', 'status'])
      const here = status.connectors.find((c: { key: string }) => c.key === 'here')
      expect(here).toMatchObject({ command: path.join(onlyHere, 'memory-only-here'), generation: 1, restarts: 0 })
      // the upstream got the installing shell's PATH and HOME, not the daemon's
      const upstreamEnv = environOf(here.pid)
      expect(upstreamEnv.PATH).toBe(shell.PATH)
      expect(upstreamEnv.HOME).toBe(process.env.HOME)
      const binding = (await prepared(dir, { workspace: 'w', session: 'here' })).mcpServers[0]!
      const client = await modernClient(binding)
      await client.callTool({
        name: 'here_create_entities',
        arguments: { entities: [{ name: 'bare', entityType: 'test', observations: ['works'] }] },
      })
      const graph = await client.callTool({ name: 'here_read_graph', arguments: {} })
      expect(JSON.stringify(graph.content)).toContain('bare')
      await client.close()
      // `available` shows the interface, never the command's path
      const available = (await tutti(dir, ['connector', 'available', '--json'])).stdout
      expect(available).not.toContain(onlyHere)
    },
  )

  it('a command that cannot be found is an install error naming it, and changes nothing', async () => {
    const before = snapshotTree(dir)
    const src = makeConnector({
      schemaVersion: 1,
      key: 'nowhere',
      name: 'Nowhere',
      version: '1.0.0',
      mcp: { transport: 'stdio', command: 'no-such-server-9f2c' },
    })
    const res = await tutti(dir, ['connector', 'install', src, '--json'], { env: { PATH: PLAIN_PATH } })
    expect(res.code).toBe(2)
    expect(JSON.parse(res.stdout).error).toMatchObject({
      code: 'COMMAND_NOT_FOUND',
      message: expect.stringContaining('command "no-such-server-9f2c" not found'),
    })
    expect(snapshotTree(dir)).toEqual(before)
  })

  it(
    'a server that crashes at start: exit 1 with its stderr tail, no secret in it; the CLI still works; available ' +
      'and doctor explain',
    async () => {
      const src = makeConnector(
        {
          schemaVersion: 1,
          key: 'crashy',
          name: 'Crashy',
          version: '1.0.0',
          auth: { kind: 'env', variables: [{ name: 'CRASHY_TOKEN' }] },
          mcp: { transport: 'stdio', command: 'node', args: ['server.mjs'] },
          cli: { entrypoint: 'cli.mjs' },
        },
        {
          // the credential reaches the server under its own name (no mcp.env), and the server leaks it
          'server.mjs':
            'console.error(`starting with token ${process.env.CRASHY_TOKEN}`)\n' +
            'console.error("Error: the database is locked")\nprocess.exit(3)\n',
          'cli.mjs': {
            mode: 0o755,
            content: 'console.log(process.env.CRASHY_TOKEN ? "cli has its token" : "cli has no token")\n',
          },
        },
      )
      expect((await installed(dir, src)).state).toMatchObject({
        status: 'needs-auth',
        reason: expect.stringContaining('missing CRASHY_TOKEN'),
      })
      const res = await tutti(dir, ['connector', 'connect', 'crashy', '--env', `CRASHY_TOKEN=${SECRET}`])
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(
        'connected crashy, but its MCP server failed: exited with code 3 before it answered initialize: ' +
          'starting with token [redacted] | Error: the database is locked',
      )
      const json = await tutti(dir, ['connector', 'available', '--json'])
      const crashy = JSON.parse(json.stdout).connectors.find((c: { key: string }) => c.key === 'crashy')
      expect(crashy.interfaces).toEqual([
        {
          kind: 'mcp',
          serverName: 'connector',
          toolPrefix: 'crashy_',
          status: 'failed',
          reason: expect.stringContaining('exited with code 3'),
        },
        // the CLI depends on the connector being active, not on its MCP server
        { kind: 'cli', command: 'tutti-connector-crashy', status: 'ready' },
      ])
      const table = await tutti(dir, ['connector', 'available'])
      expect(table.stdout).toMatch(/failed: exited with code 3/)
      expect(spawnSync(path.join(dir, 'bin', 'tutti-connector-crashy'), { encoding: 'utf8' }).stdout).toBe(
        'cli has its token\n',
      )
      const doctor = await tutti(dir, ['daemon', 'doctor', '--json'])
      expect(doctor.code).toBe(1)
      const findings = JSON.parse(doctor.stdout).findings
      expect(findings).toContainEqual(
        expect.objectContaining({
          check: 'health',
          connector: 'crashy',
          problem: expect.stringMatching(/^failed: exited with code 3/),
          fix: expect.stringContaining('tutti connector connect crashy'),
        }),
      )
      const status = await tutti(dir, ['daemon', 'status'])
      expect(status.stdout).toMatch(/crashy 1\.0\.0: failed/)
      for (const out of [
        res.stdout,
        res.stderr,
        json.stdout,
        table.stdout,
        doctor.stdout,
        status.stdout,
        fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8'),
      ])
        expect(out).not.toContain(SECRET)
    },
  )

  it(
    'an upstream that never answers: ' + 'install waits its bound, then exits 1 saying so; the install is kept',
    async () => {
      const src = makeConnector({
        schemaVersion: 1,
        key: 'mute',
        name: 'Mute',
        version: '1.0.0',
        mcp: { transport: 'stdio', command: 'node', args: ['-e', 'setInterval(() => {}, 1000)'] },
      })
      const res = await tutti(dir, ['connector', 'install', src, '--timeout', '2'])
      expect(res.code).toBe(1)
      expect(res.stderr).toMatch(/installed mute 1\.0\.0, but it was not ready within 2 s: starting the MCP server/)
      expect(JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).connectors.mute).toBeDefined()
      // uninstalling does not wait out the connect timeout: the hanging connect is abandoned
      await uninstalled(dir, 'mute', { purge: true })
      expect(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')).toMatch(
        /"connector":"mute"[^\n]*the connect was abandoned/,
      )
    },
  )

  it(
    'settings: declared, defaulted from the data dir, set with --set, given to the server under their own names; ' +
      'never gating readiness',
    async () => {
      const src = makeConnector({
        schemaVersion: 1,
        key: 'journal',
        name: 'Journal',
        version: '1.0.0',
        config: [
          {
            name: 'MEMORY_FILE_PATH',
            description: 'where the graph lives',
            default: '${TUTTI_CONNECTOR_DATA}/graph.jsonl',
          },
        ],
        mcp: { transport: 'stdio', command: 'mcp-server-memory' },
      })
      expect((await installed(dir, src)).state).toMatchObject({
        status: 'ready',
        settings: { MEMORY_FILE_PATH: path.join(dir, 'connectors', 'journal', 'data', 'graph.jsonl') },
      })
      const binding = (await prepared(dir, { workspace: 'w', session: 'journal' })).mcpServers[0]!
      const write = async (name: string) => {
        const client = await modernClient(binding)
        await client.callTool({
          name: 'journal_create_entities',
          arguments: { entities: [{ name, entityType: 'entry', observations: ['x'] }] },
        })
        await client.close()
      }
      await write('by-default')
      expect(fs.readFileSync(path.join(dir, 'connectors', 'journal', 'data', 'graph.jsonl'), 'utf8')).toContain(
        'by-default',
      )
      const elsewhere = path.join(onlyHere, 'elsewhere.jsonl')
      const connected = await tuttiJson(dir, [
        'connector',
        'connect',
        'journal',
        '--set',
        `MEMORY_FILE_PATH=${elsewhere}`,
      ])
      expect(connected).toMatchObject({
        settings: ['MEMORY_FILE_PATH'],
        state: { status: 'ready', settings: { MEMORY_FILE_PATH: elsewhere } },
      })
      await write('by-setting')
      expect(fs.readFileSync(elsewhere, 'utf8')).toContain('by-setting')
      // settings show in status, never in available
      expect((await tutti(dir, ['daemon', 'status'])).stdout).toContain(`settings: MEMORY_FILE_PATH=${elsewhere}`)
      expect((await tutti(dir, ['connector', 'available', '--json'])).stdout).not.toContain(elsewhere)
      const wrong = await tutti(dir, ['connector', 'connect', 'journal', '--set', 'NOPE=1', '--json'])
      expect(wrong.code).toBe(2)
      expect(JSON.parse(wrong.stdout).error.message).toMatch(
        /does not declare the setting NOPE \(declared: MEMORY_FILE_PATH\)/,
      )
    },
  )

  it('the prepared PATH alone runs `tutti connector available` for this state dir', async () => {
    await installed(
      dir,
      makeConnector(
        { schemaVersion: 1, key: 'onpath', name: 'On PATH', version: '1.0.0', cli: { entrypoint: 'c.js' } },
        { 'c.js': 'console.log(1)\n' },
      ),
    )
    const prepared = await tuttiJson(dir, [
      'session',
      'prepare',
      '--provider',
      'claude',
      '--workspace',
      'w',
      '--session',
      'path',
    ])
    const binDir = path.join(dir, 'bin')
    expect(prepared.env.PATH.split(path.delimiter)[0]).toBe(binDir)
    // no TUTTI_STATE_DIR, no node on PATH: the `tutti` in the bin dir pins both
    const out = execFileSync('/bin/sh', ['-c', 'tutti connector available --json'], {
      env: { PATH: `${binDir}${path.delimiter}/nonexistent` },
      encoding: 'utf8',
    })
    expect(JSON.parse(out).connectors.map((c: { key: string }) => c.key)).toContain('onpath')
    // the same answer as the CLI of this checkout, for the same state dir
    expect(JSON.parse(out)).toEqual(await tuttiJson(dir, ['connector', 'available']))
  })

  it('a session directory goes when its session is re-prepared or revoked', async () => {
    const first = await prepared(dir, { workspace: 'w', session: 'gone' })
    const { codexHome } = first.projection as { codexHome: string }
    fs.writeFileSync(path.join(codexHome, 'left-over'), 'x')
    const again = await tuttiJson(dir, [
      'session',
      'prepare',
      '--provider',
      'codex',
      '--workspace',
      'w',
      '--session',
      'gone',
    ])
    expect(again.projection.codexHome).toBe(codexHome)
    expect(fs.existsSync(path.join(codexHome, 'config.toml'))).toBe(true)
    expect(fs.existsSync(path.join(codexHome, 'left-over'))).toBe(false)
    await tuttiJson(dir, ['session', 'revoke', '--session', 'gone'])
    expect(fs.existsSync(path.dirname(codexHome))).toBe(false)
  })
})
