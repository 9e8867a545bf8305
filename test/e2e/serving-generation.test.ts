import type { Client } from '@modelcontextprotocol/client'
import fs from 'node:fs'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { processStartTicks, stillSame } from '../../src/runtime/proc/pid.js'
import { Bystander } from '../support/bystander.js'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, connectorState, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text

/** The upstream a call reached, proven by pid and start time (never by pid alone: pids are reused). */
async function servingProcess(client: Client, key: string): Promise<{ pid: number; startTicks?: string }> {
  const pid = Number(text(await client.callTool({ name: `${key}_pid`, arguments: {} })))
  const startTicks = processStartTicks(pid)
  return startTicks ? { pid, startTicks } : { pid }
}

/**
 * The status tells which generation serves (issue 21, item 9): a change of
 * credentials that cannot start withdraws the old upstream with its tools;
 * an upgrade that cannot start keeps the previous release serving, and says
 * so. One daemon for the file; each test has its own connector.
 */
describe('which generation serves after a change fails', () => {
  let dir: string
  let binding: Binding
  let bystander: Bystander
  const clients: Client[] = []
  const connect = async (): Promise<Client> => {
    const client = await modernClient(binding)
    clients.push(client)
    return client
  }
  beforeAll(async () => {
    dir = tempStateDir('serving')
    bystander = await Bystander.start(dir)
    binding = (await prepared(dir, { session: 'serving' })).mcpServers[0]!
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    'a replaced credential that fails: ' + 'tools withdrawn (list_changed), calls refused, the old process gone',
    async () => {
      const env = { FIXTURE_CREDENTIAL: '${API_TOKEN}' }
      const release = faultConnector({ key: 'keyed', activation: 'eager', auth: ['API_TOKEN'], env })
      await tuttiJson(dir, ['connector', 'install', release, '--no-wait'])
      await connected(dir, 'keyed', { env: { API_TOKEN: 'good-token-1' } })
      const client = await connect()
      const old = await servingProcess(client, 'keyed')
      expect(fs.readFileSync(`/proc/${old.pid}/environ`, 'latin1').split('\0')).toContain('API_TOKEN=good-token-1')
      const changes: unknown[] = []
      client.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n))
      const sub = await client.listen({ toolsListChanged: true })
      try {
        const change = tutti(dir, ['connector', 'connect', 'keyed', '--env', 'API_TOKEN=revoked-token-2', '--json'])
        const { result: res, watched } = await bystander.during(change)
        // the change is stored, but not ready: exit 1 with the server's own words
        expect(res.code, res.stdout + res.stderr).toBe(1)
        const failed = /connected keyed, but its MCP server failed: .*refused the API key \(revoked\)/
        expect(JSON.parse(res.stdout).error.message).toMatch(failed)
        expect(watched).toEqual({ statuses: watched.statuses.map(() => 200), missingTools: 0 })
        // nothing runs with the value the user replaced
        expect(await until(() => !stillSame(old))).toBe(true)
        expect(await until(() => changes.length >= 1)).toBe(true)
        expect((await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('keyed_'))).toEqual([])
        const refused = client.callTool({ name: 'keyed_echo', arguments: { message: 'x' } })
        await expect(refused).rejects.toThrow(/unknown tool|no longer available/)
        const state = await connectorState(dir, 'keyed')
        expect(state).toMatchObject({ status: 'failed', tools: 0, reason: expect.stringMatching(/revoked/) })
        expect(state).not.toHaveProperty('pid')
        expect(state).not.toHaveProperty('failedChange')
        // the other connector never noticed
        await bystander.expectServing()
        // a good value brings it back, as a new process
        await connected(dir, 'keyed', { env: { API_TOKEN: 'good-token-3' } })
        expect(await until(async () => (await client.listTools()).tools.some((t) => t.name === 'keyed_echo'))).toBe(
          true,
        )
        expect(text(await client.callTool({ name: 'keyed_echo', arguments: { message: 'back' } }))).toBe('back')
      } finally {
        await sub.close()
      }
      const seen = [JSON.stringify(await connectorState(dir, 'keyed')), fs.readFileSync(`${dir}/daemon.log`, 'utf8')]
      for (const out of seen) {
        expect(out).not.toContain('good-token-1')
        expect(out).not.toContain('revoked-token-2')
      }
    },
  )

  it('an upgrade whose server fails to start keeps the previous release serving; every status says which', async () => {
    const v1 = faultConnector({ key: 'upgraded', version: '1.0.0', activation: 'eager' })
    await installed(dir, v1)
    const client = await connect()
    const old = await servingProcess(client, 'upgraded')
    const before = await connectorState(dir, 'upgraded')
    const env = { FIXTURE_FAIL_START: 'cannot open the cache db' }
    const broken = faultConnector({ key: 'upgraded', version: '1.1.0', activation: 'eager', env })
    const res = await tutti(dir, ['connector', 'install', broken, '--json'])
    expect(res.code, res.stdout + res.stderr).toBe(1)
    const failed =
      /installed upgraded 1\.1\.0, but its MCP server failed: .*cannot open the cache db.*; 1\.0\.0 keeps serving$/
    expect(JSON.parse(res.stdout).error.message).toMatch(failed)
    const state = await connectorState(dir, 'upgraded')
    // never failed while serving: ready, the old process answering, and the note says which release serves
    expect(state).toMatchObject({
      status: 'ready',
      generation: before.generation,
      pid: old.pid,
      reason: expect.stringMatching(/^1\.0\.0 serving; 1\.1\.0 failed: .*cannot open the cache db/),
      failedChange: {
        servingVersion: '1.0.0',
        version: '1.1.0',
        reason: expect.stringMatching(/cannot open the cache db/),
      },
    })
    expect(await servingProcess(client, 'upgraded')).toEqual(old)
    const human = await tutti(dir, ['daemon', 'status'])
    expect(human.stdout).toMatch(
      /upgraded 1\.1\.0: ready \(1\.0\.0 serving; 1\.1\.0 failed: .*cannot open the cache db.*\), gen/,
    )
    const available = await tuttiJson(dir, ['connector', 'available'])
    const mcp = available.connectors.find((c: { key: string }) => c.key === 'upgraded').interfaces[0]
    const note = expect.stringMatching(/^1\.0\.0 serving; 1\.1\.0 failed: /)
    expect(mcp).toMatchObject({ kind: 'mcp', status: 'ready', reason: note })
    expect((await tutti(dir, ['connector', 'available'])).stdout).toMatch(/ready \(1\.0\.0 serving; 1\.1\.0 failed: /)
    // a working 1.1.1 takes over, and the note is gone
    const fixedRelease = faultConnector({ key: 'upgraded', version: '1.1.1', activation: 'eager' })
    await installed(dir, fixedRelease)
    const fixed = await connectorState(dir, 'upgraded')
    expect(fixed).toMatchObject({ status: 'ready', version: '1.1.1' })
    expect(fixed).not.toHaveProperty('reason')
    expect(await until(() => !stillSame(old))).toBe(true)
  })
})
