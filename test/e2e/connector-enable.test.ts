import fs from 'node:fs'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { fullConnector, probeConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { legacyPost, MODERN_META, modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import {
  childPids,
  cleanupState,
  connectorState,
  isAlive,
  readDaemonJson,
  snapshotTree,
  tempStateDir,
  tutti,
  tuttiJson,
} from '../support/tutti.js'

// `connector disable` and `enable` (issue 23): a connector with an MCP server from npm, a CLI and a
// Skill is withdrawn from every facade and comes back, while its credentials, release and data stay
// as they were on disk; the switch holds across a daemon restart, a reinstall and a reconnect.

const SECRET = 'full-secret-8c2e41d7a9'
/** Eager: an upstream that would start at once with the daemon, or at an install, were it not disabled. */
const FULL_OPTIONS = { auth: 'FULL_KEY', activation: 'eager' } as const
/** A legal extra `_meta` key: the same request, but not exactly plain, so the SDK path serves it. */
const SDK_META = { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' }

describe('connector disable / enable', () => {
  let dir: string
  let binding: Binding
  let client: Client
  const heard = { tools: 0, resources: 0 }
  const file = (...parts: string[]) => path.join(dir, ...parts)
  const shim = () => file('bin', 'tutti-connector-full')
  const bytes = (rel: string) => fs.readFileSync(file(rel))
  const kept = () => ({
    credentials: bytes('credentials.json').toString('utf8'),
    data: snapshotTree(file('connectors', 'full', 'data')),
    releases: snapshotTree(file('connectors', 'full', 'releases')),
  })

  /** tools/list on each path and era: the names that start with `full_`. */
  async function fullTools(): Promise<string[][]> {
    const pick = (r: { json?: any }) =>
      (r.json.result.tools as Array<{ name: string }>).map((t) => t.name).filter((n) => n.startsWith('full_'))
    const legacy = { id: 2, method: 'tools/list' }
    return [
      pick(await modernPost(binding, 'tools/list')),
      pick(await modernPost(binding, 'tools/list', { _meta: SDK_META })),
      pick(await legacyPost(binding, legacy, { 'mcp-protocol-version': '2025-06-18' })),
      pick(await legacyPost(binding, legacy)),
    ]
  }

  /** tools/call on each path and era: the error codes (undefined: answered). */
  async function callCodes(name: string, args: Record<string, unknown> = {}): Promise<unknown[]> {
    const legacy = { id: 3, method: 'tools/call', params: { name, arguments: args } }
    const answers = [
      await modernPost(binding, 'tools/call', { name, arguments: args }),
      await modernPost(binding, 'tools/call', { name, arguments: args, _meta: SDK_META }),
      await legacyPost(binding, legacy, { 'mcp-protocol-version': '2025-06-18' }),
      await legacyPost(binding, legacy),
    ]
    return answers.map((a) => a.json.error?.code)
  }

  const skillUris = async () =>
    ((await modernPost(binding, 'skills/list')).json.result.skills as Array<{ uri: string }>).map((s) => s.uri)
  const skillRoots = async (session: string) =>
    (await prepared(dir, { provider: 'tutti-agent', session })).skillRoots.map((r) => r.connector)

  /** A session and a listen stream that counts each list_changed. */
  async function listen(session: string): Promise<void> {
    await client?.close()
    binding = (await prepared(dir, { provider: 'tutti-agent', session })).mcpServers[0]!
    client = await modernClient(binding)
    client.setNotificationHandler('notifications/tools/list_changed', () => void heard.tools++)
    client.setNotificationHandler('notifications/resources/list_changed', () => void heard.resources++)
    const sub = await client.listen({ toolsListChanged: true, resourcesListChanged: true })
    expect(sub.honoredFilter).toMatchObject({ toolsListChanged: true, resourcesListChanged: true })
  }

  beforeAll(async () => {
    dir = tempStateDir('enable')
    await installed(dir, fullConnector('full', FULL_OPTIONS))
    await connected(dir, 'full', { env: { FULL_KEY: SECRET } })
    // a bystander with a CLI only: it keeps its shim throughout
    await installed(dir, probeConnector('probe'))
    await listen('enable')
  })
  afterAll(async () => {
    await client?.close()
    await cleanupState(dir)
  })

  let before: ReturnType<typeof kept>
  let pid: number

  it('disable: tools, shim and Skills go on every facade, announced; credentials, release and data stay', async () => {
    // the server writes its data dir: something to keep
    const created = await client.callTool({
      name: 'full_create_entities',
      arguments: { entities: [{ name: 'tutti', entityType: 'tool', observations: ['kept while disabled'] }] },
    })
    expect(created.isError).toBeFalsy()
    pid = (await connectorState(dir, 'full')).pid
    expect(isAlive(pid)).toBe(true)
    expect((await fullTools()).map((list) => list.length)).toEqual([9, 9, 9, 9])
    expect(fs.existsSync(shim())).toBe(true)
    expect(await skillUris()).toEqual(['skill://full/full-workflow/SKILL.md'])
    before = kept()
    expect(before.credentials).toContain(SECRET)
    expect(Object.keys(before.data)).toContain('memory.jsonl')
    const heardBefore = { ...heard }

    const res = await tutti(dir, ['connector', 'disable', 'full', '--json'])
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ key: 'full', disabled: true, changed: true })
    expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'disabled', disabled: true, tools: 0 })
    expect(await until(() => heard.tools > heardBefore.tools && heard.resources > heardBefore.resources)).toBe(true)

    expect(await fullTools()).toEqual([[], [], [], []])
    expect(await callCodes('full_read_graph')).toEqual([-32602, -32602, -32602, -32602])
    expect(fs.existsSync(shim())).toBe(false)
    expect(fs.existsSync(file('bin', 'tutti-connector-probe'))).toBe(true)
    expect(await skillUris()).toEqual([])
    expect(await skillRoots('fresh-after-disable')).toEqual([])
    // its upstream is stopped, not left running
    expect(await until(() => !isAlive(pid))).toBe(true)
    expect(kept()).toEqual(before)
    const installedJson = JSON.parse(bytes('installed.json').toString('utf8'))
    expect(installedJson.connectors.full.disabled).toBe(true)
  })

  it('every view says disabled and how to undo it; the doctor and the log cope', async () => {
    const available = await tuttiJson(dir, ['connector', 'available'])
    const full = available.connectors.find((c: { key: string }) => c.key === 'full')
    for (const i of full.interfaces) {
      expect(i.status).toBe('disabled')
      expect(i.reason).toContain('tutti connector enable full')
    }
    const table = await tutti(dir, ['connector', 'available'])
    expect(table.stdout).toMatch(/disabled/)
    const status = await tuttiJson(dir, ['daemon', 'status'])
    expect(status.connectors.find((c: { key: string }) => c.key === 'full')).toMatchObject({
      status: 'disabled',
      disabled: true,
      reason: expect.stringContaining('tutti connector enable full'),
      upstream: 'none',
    })
    expect((await tutti(dir, ['daemon', 'status'])).stdout).toMatch(/full 1\.0\.0: disabled, .*tutti connector enable/)
    const doctor = await tutti(dir, ['daemon', 'doctor', '--json'])
    expect(doctor.code, doctor.stdout).toBe(0)
    const logs = await tuttiJson(dir, ['connector', 'logs', 'full', '--lines', '1000'])
    expect(logs.lines.some((l: { status?: string }) => l.status === 'disabled')).toBe(true)
  })

  it('disabling again changes nothing and says so; an unknown key exits 2 naming it, writing nothing', async () => {
    const state = bytes('installed.json')
    const again = await tutti(dir, ['connector', 'disable', 'full'])
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/full is already disabled; nothing changed/)
    for (const verb of ['disable', 'enable']) {
      const unknown = await tutti(dir, ['connector', verb, 'nope'])
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toMatch(/connector "nope" is not installed/)
    }
    expect(bytes('installed.json')).toEqual(state)
  })

  it('a daemon restarted while it is disabled keeps it disabled and starts no upstream', async () => {
    await tuttiJson(dir, ['daemon', 'stop'])
    const started = await tuttiJson(dir, ['daemon', 'start'])
    expect(started.connectors.find((c: { key: string }) => c.key === 'full')).toMatchObject({ status: 'disabled' })
    const daemon = readDaemonJson(dir)!.pid
    await listen('after-restart')
    expect(await fullTools()).toEqual([[], [], [], []])
    expect(childPids(daemon)).toEqual([])
    expect(fs.existsSync(shim())).toBe(false)
  })

  it('enable: everything is back, announced, with the data it had; credentials and release as they were', async () => {
    const heardBefore = { ...heard }
    const res = await tuttiJson(dir, ['connector', 'enable', 'full'])
    expect(res).toMatchObject({ key: 'full', disabled: false, changed: true, state: { status: 'ready', tools: 9 } })
    expect(await until(() => heard.tools > heardBefore.tools && heard.resources > heardBefore.resources)).toBe(true)
    expect((await fullTools()).map((list) => list.length)).toEqual([9, 9, 9, 9])
    expect(await callCodes('full_read_graph')).toEqual([undefined, undefined, undefined, undefined])
    const graph = await client.callTool({ name: 'full_read_graph', arguments: {} })
    expect(JSON.stringify(graph.content)).toContain('kept while disabled')
    expect(fs.existsSync(shim())).toBe(true)
    expect(await skillUris()).toEqual(['skill://full/full-workflow/SKILL.md'])
    expect(await skillRoots('fresh-after-enable')).toEqual(['full'])
    expect(kept()).toEqual(before)
    expect(JSON.parse(bytes('installed.json').toString('utf8')).connectors.full.disabled).toBeUndefined()
    const again = await tutti(dir, ['connector', 'enable', 'full'])
    expect(again.stdout).toMatch(/full is not disabled; nothing changed/)
  })

  it('the switch survives a reinstall of a new version and a reconnect, and no upstream starts meanwhile', async () => {
    await tuttiJson(dir, ['connector', 'disable', 'full'])
    const daemon = readDaemonJson(dir)!.pid
    const upgraded = await installed(dir, fullConnector('full', { ...FULL_OPTIONS, version: '1.0.1' }))
    expect(upgraded).toMatchObject({ version: '1.0.1', changed: true, state: { status: 'disabled' } })
    const reconnected = await connected(dir, 'full', { env: { FULL_KEY: `${SECRET}-2` } })
    expect(reconnected.state).toMatchObject({ status: 'disabled' })
    // a filter set while it is disabled is checked against the server's last table, which it keeps
    const filtered = await tuttiJson(dir, ['connector', 'connect', 'full', '--hide-tools', 'delete_entities'])
    expect(filtered).toMatchObject({ tools: { checkedAgainst: 'cache' }, state: { status: 'disabled' } })
    expect((await tutti(dir, ['connector', 'connect', 'full', '--tools', 'nope'])).code).toBe(2)
    expect(childPids(daemon)).toEqual([])
    expect(await fullTools()).toEqual([[], [], [], []])
    const enabled = await tuttiJson(dir, ['connector', 'enable', 'full'])
    expect(enabled.state).toMatchObject({ status: 'ready', version: '1.0.1', tools: 8, hiddenTools: 1 })
  })
})
