import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { listeningPort } from '../support/listening-port.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, connectorState, EXAMPLES, REPO, snapshotTree, tempStateDir, tutti } from '../support/tutti.js'
import type { RunResult } from '../support/tutti.js'

const EVERYTHING = path.join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')
const SLACK = 'npm:@modelcontextprotocol/server-slack'

/** The environment of a live process, as NAME=VALUE lines. */
const environ = (pid: number) => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')

const readIfThere = (p: string) => {
  try {
    return fs.readFileSync(p, 'latin1')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw err
  }
}

/** Every file of the state dir but the credential store, with the daemon's log. */
function stateFilesBut(dir: string, store: string): string {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name)
      // the concurrent test's install stages and removes files in tmp/ while this walks
      const st = fs.lstatSync(p, { throwIfNoEntry: false })
      if (st?.isDirectory()) walk(p)
      else if (st?.isFile() && p !== store && !/README/i.test(name)) out.push(readIfThere(p))
    }
  }
  walk(dir)
  return out.join('\n')
}

/*
 * Keys at install, as a user adds a server to claude or codex: `--env`, `--from-env`, `--secret`
 * for an npm server that needs a key, a command line, a URL with a header. Each value reaches the
 * server (its environment, or the header the remote checks) and no output, log or state file but
 * the 0600 credential store.
 */
describe('install with keys, from a command or a URL', () => {
  let dir: string
  let remote: ChildProcess
  let port: number
  const outputs: RunResult[] = []
  const run = async (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) => {
    const res = await tutti(dir, args, options)
    outputs.push(res)
    return res
  }
  /** Ready, and for a stdio server running (its pid known); a remote one has no process. */
  const ready = async (key: string, remote = false) => {
    type State = { status: string; pid: number; tools: number; settings?: Record<string, string> }
    const running = (s: State | undefined) => s?.status === 'ready' && (remote || s.pid !== undefined)
    const state: State | undefined = await eventually(() => connectorState(dir, key), running)
    expect(state?.status, JSON.stringify(state)).toBe('ready')
    return state!
  }
  const noLeak = async (value: string) => {
    const looks = [
      ['daemon', 'status'],
      ['daemon', 'status', '--json'],
      ['connector', 'available', '--json'],
    ]
    for (const args of looks) await run(args)
    for (const out of outputs) expect(`${out.stdout}${out.stderr}`).not.toContain(value)
    expect(stateFilesBut(dir, path.join(dir, 'credentials.json'))).not.toContain(value)
    expect(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')).toContain(value)
    expect(fs.statSync(path.join(dir, 'credentials.json')).mode & 0o777).toBe(0o600)
  }

  beforeAll(async () => {
    dir = tempStateDir('install-keys')
    remote = spawn(process.execPath, [path.join(REPO, 'test/fixtures/http-server.mjs')], {
      env: { ...process.env, FIXTURE_HTTP_TOKEN: 'remote-header-secret-4711', FIXTURE_HTTP_USER: 'keys' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    port = await listeningPort(remote, 'http fixture')
  })
  afterAll(async () => {
    remote?.kill()
    await cleanupState(dir)
  })

  it.concurrent('an npm server that needs a key installs with --secret, --env; only its process has it', async () => {
    const token = 'xoxb-install-secret-0815'
    const args = ['connector', 'install', SLACK, '--secret', 'SLACK_BOT_TOKEN', '--env', 'SLACK_TEAM_ID=T0KEYS']
    const res = await run(args, { input: `${token}\n` })
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toMatch(/installed slack .*\(ready\)/)
    const state = await ready('slack')
    expect(state.tools).toBeGreaterThan(0)
    expect(environ(state.pid)).toEqual(expect.arrayContaining([`SLACK_BOT_TOKEN=${token}`, 'SLACK_TEAM_ID=T0KEYS']))
    // the team id is a setting (shown), the token a credential (never shown)
    expect(state.settings).toEqual({ SLACK_TEAM_ID: 'T0KEYS' })
    await noLeak(token)
  })

  it.concurrent('a server that exits on a missing variable names the flag; connect --env declares it', async () => {
    const res = await run(['connector', 'install', SLACK, '--key', 'slacker'])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(
      'Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables; ' +
        'run tutti connector connect slacker --env SLACK_BOT_TOKEN=… --env SLACK_TEAM_ID=… ' +
        '(or --secret SLACK_BOT_TOKEN)',
    )
    const token = 'xoxb-connect-secret-4242'
    const connected = await run([
      'connector',
      'connect',
      'slacker',
      '--env',
      `SLACK_BOT_TOKEN=${token}`,
      '--env',
      'SLACK_TEAM_ID=T0CONN',
    ])
    expect(connected.code, connected.stderr).toBe(0)
    const state = await ready('slacker')
    expect(environ(state.pid)).toEqual(expect.arrayContaining([`SLACK_BOT_TOKEN=${token}`, 'SLACK_TEAM_ID=T0CONN']))
    // the new release generation declares both: the token as a secret auth variable, the team as a setting
    const installed = JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).connectors.slacker
    const release = path.join(dir, 'connectors/slacker/releases', installed.digest)
    const manifest = JSON.parse(fs.readFileSync(path.join(release, 'tutti-connector.json'), 'utf8'))
    expect(manifest.auth).toEqual({ kind: 'env', variables: [{ name: 'SLACK_BOT_TOKEN', secret: true }] })
    expect(manifest.config).toEqual([{ name: 'SLACK_TEAM_ID' }])
    await noLeak(token)
  })

  it('the command form runs a real server with its keys; --from-env takes one from the shell', async () => {
    const key = 'every-api-key-value-31337'
    const res = await run(
      [
        'connector',
        'install',
        '--key',
        'every',
        '--env',
        'EVERY_LOG=debug',
        '--from-env',
        'EVERY_API_KEY',
        '--',
        'node',
        EVERYTHING,
        'stdio',
      ],
      { env: { EVERY_API_KEY: key } },
    )
    expect(res.code, res.stderr).toBe(0)
    const state = await ready('every')
    expect(state.tools).toBeGreaterThan(5)
    expect(environ(state.pid)).toEqual(expect.arrayContaining([`EVERY_API_KEY=${key}`, 'EVERY_LOG=debug']))
    expect(state.settings).toEqual({ EVERY_LOG: 'debug' })
    await noLeak(key)
  })

  it('a URL with --header: the remote gets the header, a call works, the value is a credential only', async () => {
    const header = 'Bearer remote-header-secret-4711'
    const url = `http://127.0.0.1:${port}/mcp`
    const res = await run(['connector', 'install', '--key', 'remote', '--header', `Authorization: ${header}`, url])
    expect(res.code, res.stderr).toBe(0)
    await ready('remote', true)
    const prepare = ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'keys', '--json']
    const prepared = await run(prepare)
    const binding: Binding = JSON.parse(prepared.stdout).mcpServers[0]
    const client = await modernClient(binding)
    const answer = await client.callTool({ name: 'remote_whoami', arguments: {} })
    await client.close()
    expect(JSON.stringify(answer.content)).toContain('authorized as keys')
    await noLeak('remote-header-secret-4711')
  })

  it('bad input exits 2 naming it and changes nothing on disk', async () => {
    const before = snapshotTree(dir)
    const refused = async (args: string[], message: string | RegExp, input?: string) => {
      const out = await run(args, input === undefined ? {} : { input })
      expect(out.code, out.stderr).toBe(2)
      expect(out.stderr).toMatch(message)
    }
    const command = ['--key', 'x', '--', 'node', EVERYTHING]
    const install = ['connector', 'install']
    await refused([...install, '--env', '1BAD=x', ...command], /--env "1BAD": not an environment variable name/)
    await refused([...install, '--secret', 'NO_LINE_TOKEN', ...command], /--secret NO_LINE_TOKEN: no value/, '')
    // a hand-written release declares its own variables: the refusal says where
    const declare = /does not declare NOTES_TOKEN .*"auth": \{"kind": "env", "variables": \[\{"name": "NOTES_TOKEN"/
    await refused(['connector', 'install', path.join(EXAMPLES, 'notes'), '--env', 'NOTES_TOKEN=abc'], declare)
    const noColon = /--header "NoColon": expects "Name: value"/
    await refused(['connector', 'install', '--header', 'NoColon', 'https://mcp.example.com/mcp'], noColon)
    const memory = 'npm:@modelcontextprotocol/server-memory'
    await refused(['connector', 'install', '--header', 'X: y', memory], /--header is for a remote server/)
    await refused(['connector', 'install', '--', './not-a-name.sh'], /give the command by name/)
    await refused(['connector', 'install', '--', 'some-server'], /name the connector with --key NAME/)
    await refused(['connector', 'install', 'http://127.0.0.1:9/mcp'], /an IP address names no connector; choose/)
    expect(snapshotTree(dir)).toEqual(before)
  })

  it("a dry run shows a URL's generated manifest: the key from its host, headers as ${VAR}, no value", async () => {
    const url = 'https://mcp.linear.app/mcp?api_key=dry-query-2'
    const res = await run(['connector', 'install', '--dry-run', '--json', '--header', 'X-Api-Key: dry-value-1', url])
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).not.toMatch(/dry-value-1|dry-query-2/)
    const { manifest } = JSON.parse(res.stdout)
    expect(manifest.key).toBe('linear')
    const headers = { 'X-Api-Key': '${X_API_KEY}' }
    expect(manifest.mcp).toEqual({ transport: 'http', url: 'https://mcp.linear.app/mcp?api_key=${API_KEY}', headers })
    expect(manifest.auth.variables.map((v: { name: string }) => v.name)).toEqual(['X_API_KEY', 'API_KEY'])
  })
})
