import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { listeningPort } from '../support/listening-port.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { pluginWithServers } from '../support/package-sources.js'
import { cleanupState, connectorState, control, REPO, snapshotTree, tempStateDir, tutti } from '../support/tutti.js'

const BEARER = 'codex-bearer-4f1e9a7c2b'
const TENANT_KEY = 'tenant-key-8d3b6e0f11'
const TFE_TOKEN = 'tfe-secret-value-123'
const SERVICE_API_KEY = 'hand-written-key-5a9c2e'
const SIGNING = 'marked-secret-77b0d4'
const SECRETS = [BEARER, TENANT_KEY, TFE_TOKEN, SERVICE_API_KEY, SIGNING]

/*
 * Every field of a plugin's server entry is carried or listed as skipped (issue 21, item 5), and a
 * credential, whichever way it came in, is printed by nothing (item 3): status, available, doctor,
 * errors and the daemon log are checked for the exact values.
 */
describe('source fields: mapped or reported; secrets never shown', () => {
  let dir: string
  let binding: Binding
  let server: ChildProcess
  let port: number
  const record = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-headers-')), 'headers.jsonl')
  /** Every line any command printed, to grep for the secrets at the end. */
  const printed: string[] = []
  const run = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const out = await tutti(dir, args, { env })
    printed.push(out.stdout, out.stderr)
    return out
  }
  const call = async (name: string, args: Record<string, unknown>) => {
    const client = await modernClient(binding)
    try {
      return await client.callTool({ name, arguments: args })
    } finally {
      await client.close()
    }
  }

  beforeAll(async () => {
    const env = { ...process.env, FIXTURE_HTTP_TOKEN: BEARER, FIXTURE_HTTP_USER: 'codex', FIXTURE_HTTP_RECORD: record }
    server = spawn(process.execPath, [path.join(REPO, 'test/fixtures/http-server.mjs')], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    port = await listeningPort(server, 'the HTTP fixture')
    dir = tempStateDir('fields')
    binding = (await prepared(dir, { session: 'fields' })).mcpServers[0]!
  })
  afterAll(async () => {
    server?.kill()
    await cleanupState(dir)
  })

  it('a Codex plugin with bearer_token_env_var sends the header; every other field is carried or listed', async () => {
    const plugin = pluginWithServers('codex', 'remote-codex', {
      remote: {
        url: `http://127.0.0.1:${port}/mcp`,
        bearer_token_env_var: 'CODEX_BEARER',
        http_headers: { 'X-Client': 'tutti-test' },
        env_http_headers: { 'X-Tenant-Key': 'TENANT_KEY' },
        tool_timeout_sec: 900,
        startup_timeout_sec: 20,
        enabled_tools: ['whoami'],
        experimental_knob: true,
      },
    })
    const before = snapshotTree(dir)
    const dry = await run(['connector', 'install', plugin, '--dry-run'])
    expect(dry.code, dry.stderr).toBe(0)
    // the dry run lists what is skipped, and changes nothing; enabled_tools is the connector's filter
    expect(dry.stderr).not.toMatch(/enabled_tools/)
    expect(dry.stderr).toMatch(/skipped: mcpServers\.remote\.experimental_knob: not a field tutti knows/)
    const manifest = JSON.parse(dry.stdout)
    expect(manifest.mcp).toEqual({
      transport: 'http',
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { 'X-Client': 'tutti-test', 'X-Tenant-Key': '${TENANT_KEY}', Authorization: 'Bearer ${CODEX_BEARER}' },
      timeouts: { startupSeconds: 20, toolCallSeconds: 900 },
      tools: { allow: ['whoami'] },
    })
    expect(manifest.auth).toEqual({
      kind: 'env',
      variables: [
        { name: 'TENANT_KEY', secret: true },
        { name: 'CODEX_BEARER', secret: true },
      ],
    })
    const json = await run(['connector', 'install', plugin, '--dry-run', '--json'])
    expect(JSON.parse(json.stdout).source.skipped).toEqual([
      'mcpServers.remote.experimental_knob: not a field tutti knows; it is not carried',
    ])
    expect(snapshotTree(dir)).toEqual(before)

    const installed = await run(['connector', 'install', plugin, '--json'])
    expect(installed.code, installed.stderr).toBe(0)
    expect(JSON.parse(installed.stdout).state).toMatchObject({ status: 'needs-auth' })
    // the values come from this environment: never in argv
    const connected = await run(
      ['connector', 'connect', 'remote-codex', '--from-env', 'CODEX_BEARER', '--from-env', 'TENANT_KEY', '--json'],
      { CODEX_BEARER: BEARER, TENANT_KEY },
    )
    expect(connected.code, connected.stderr).toBe(0)
    // the server has two tools; enabled_tools serves one
    expect(JSON.parse(connected.stdout).state).toMatchObject({ status: 'ready', tools: 1, hiddenTools: 1 })
    const answer = await call('remote-codex_whoami', {})
    expect(answer.content).toEqual([{ type: 'text', text: 'authorized as codex' }])
    const seen = fs
      .readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>)
    expect(seen.at(-1)).toMatchObject({
      authorization: `Bearer ${BEARER}`,
      'x-client': 'tutti-test',
      'x-tenant-key': TENANT_KEY,
    })
  })

  it("${TFE_TOKEN} in a plugin's args is a secret setting: the server gets it, nothing shows it", async () => {
    const plugin = pluginWithServers('claude', 'tfe', {
      tfe: {
        command: 'node',
        args: ['${CLAUDE_PLUGIN_ROOT}/server.mjs', '--token', '${TFE_TOKEN}'],
        env: { FIXTURE_VARIANT: 'v1' },
      },
    })
    const installed = await run(['connector', 'install', plugin, '--json'])
    expect(installed.code, installed.stderr).toBe(0)
    // where the secret goes is said, and that argv is readable
    expect(installed.stderr).toMatch(
      /note: TFE_TOKEN goes in the server's arguments, where any local user can read it in `ps`/,
    )
    expect(JSON.parse(installed.stdout).source.notes).toEqual([
      expect.stringMatching(/^TFE_TOKEN goes in the server's arguments/),
    ])
    // the issue's own steps: `connect --set`, then `daemon status`
    const connected = await run(['connector', 'connect', 'tfe', '--set', `TFE_TOKEN=${TFE_TOKEN}`, '--json'])
    expect(connected.code, connected.stderr).toBe(0)
    expect(JSON.parse(connected.stdout)).toMatchObject({ settings: ['TFE_TOKEN'], variables: [] })
    expect((await call('tfe_echo', { message: 'hi' })).content).toEqual([{ type: 'text', text: 'hi' }])
    const state = await connectorState(dir, 'tfe')
    expect(state).toMatchObject({ status: 'ready' })
    expect(state.settings).toBeUndefined()
    expect(fs.readFileSync(`/proc/${state.pid}/cmdline`, 'utf8').split('\0')).toContain(TFE_TOKEN)
    // kept with the credentials (0600), not in installed.json
    expect(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).not.toContain(TFE_TOKEN)
    expect(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')).toContain(TFE_TOKEN)
    expect(fs.statSync(path.join(dir, 'credentials.json')).mode & 0o777).toBe(0o600)
  })

  it('a hand-written manifest: a setting marked secret or named like a key is never shown; others are', async () => {
    const config = [{ name: 'SERVICE_API_KEY' }, { name: 'SIGNING', secret: true }, { name: 'REGION' }]
    await installed(dir, faultConnector({ key: 'handmade', manifest: { config } }))
    const connected = await run([
      'connector',
      'connect',
      'handmade',
      '--set',
      `SERVICE_API_KEY=${SERVICE_API_KEY}`,
      '--set',
      `SIGNING=${SIGNING}`,
      '--set',
      'REGION=eu-west',
      '--json',
    ])
    expect(connected.code, connected.stderr).toBe(0)
    expect((await connectorState(dir, 'handmade')).settings).toEqual({ REGION: 'eu-west' })
    const status = await run(['daemon', 'status'])
    expect(status.stdout).toMatch(/settings: REGION=eu-west\n/)
  })

  it('a server that prints its secret argv and exits: the reason and the log carry no value', async () => {
    const plugin = pluginWithServers('claude', 'leaky', {
      leaky: {
        command: 'node',
        args: [
          '-e',
          'console.error("starting with " + process.argv.slice(1).join(" ")); process.exit(3)',
          '--',
          '${LEAKY_TOKEN}',
        ],
      },
    })
    await run(['connector', 'install', plugin, '--json'])
    const connected = await run(['connector', 'connect', 'leaky', '--env', `LEAKY_TOKEN=${TFE_TOKEN}-leaky`, '--json'])
    expect(connected.code).toBe(1)
    expect(JSON.parse(connected.stdout).error.message).toMatch(/exit|code 3/)
    const state = await connectorState(dir, 'leaky')
    expect(state.status).toBe('failed')
    expect(JSON.stringify(state)).not.toContain(`${TFE_TOKEN}-leaky`)
  })

  it(
    'tool_timeout_sec bounds a call: ' + 'a tool that never answers fails naming the timeout, and the server serves on',
    async () => {
      const gate = path.join(os.tmpdir(), `tutti-never-${process.pid}-${Date.now()}`)
      const plugin = pluginWithServers('codex', 'patient', {
        patient: {
          command: 'node',
          args: ['${PLUGIN_ROOT}/server.mjs'],
          env: { FIXTURE_GATE: gate },
          tool_timeout_sec: 1,
        },
      })
      const installed = await run(['connector', 'install', plugin, '--json'])
      expect(installed.code, installed.stderr).toBe(0)
      // the gate file is never made: the call would wait for ever
      const result = call('patient_slow', { ms: 0 })
      await expect(result).rejects.toThrow(
        /tool "slow" timed out: no answer within 1 s \(mcp\.timeouts\.toolCallSeconds\); the call was cancelled/,
      )
      expect((await call('patient_echo', { message: 'still here' })).content).toEqual([
        { type: 'text', text: 'still here' },
      ])
    },
  )

  it('startup_timeout_sec bounds the start of a server that never answers; what it printed is said', async () => {
    // an npm server that serves HTTP unless told to use stdio announces its address and waits
    const serve = "console.log('MCP server listening on http://127.0.0.1:3001/mcp'); setInterval(() => {}, 1000)"
    const plugin = pluginWithServers('codex', 'mute', {
      mute: { command: 'node', args: ['-e', serve], startup_timeout_sec: 1 },
    })
    const installed = await run(['connector', 'install', plugin, '--json'])
    expect(installed.code).toBe(1)
    const { message } = JSON.parse(installed.stdout).error
    expect(message).toMatch(/no initialize answer within 1 s \(mcp\.timeouts\.startupSeconds\)/)
    expect(message).toContain(
      'it printed "MCP server listening on http://127.0.0.1:3001/mcp": it looks like an HTTP server, not a stdio one',
    )
  })

  it('no command output, status, available, doctor or the daemon log holds a secret value', async () => {
    for (const args of [
      ['daemon', 'status'],
      ['daemon', 'status', '--json'],
      ['connector', 'available'],
      ['connector', 'available', '--json'],
      ['daemon', 'doctor'],
      ['daemon', 'doctor', '--json'],
    ]) {
      await run(args)
    }
    // the daemon's own answer too, not only the CLI's redacted print of it
    const raw = JSON.stringify(await control(dir, 'status'))
    await until(() => fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').includes('leaky'))
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    for (const secret of [...SECRETS, `${TFE_TOKEN}-leaky`]) {
      expect(printed.join('\n')).not.toContain(secret)
      expect(raw).not.toContain(secret)
      expect(log).not.toContain(secret)
    }
  })
})
