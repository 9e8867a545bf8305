import type { Client } from '@modelcontextprotocol/client'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { childPids, cleanupState, isAlive, readDaemonJson, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text


describe('crashed upstreams and upgrades under load', () => {
  let dir: string
  let binding: Binding
  let client: Client
  beforeAll(async () => {
    dir = tempStateDir('faults')
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx' })])
    binding = (await tuttiJson(dir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'faults'])).mcpServers[0]
    client = await modernClient(binding)
  })
  afterAll(async () => {
    await client?.close()
    await cleanupState(dir)
  })

  const fxState = async () => (await tuttiJson(dir, ['daemon', 'status'])).connectors.find((c: { key: string }) => c.key === 'fx')

  it('kill -9 of the upstream mid-call: the call fails within 2 s, the connector comes back as a new generation', async () => {
    const before = await fxState()
    const pid = Number(text(await client.callTool({ name: 'fx_pid', arguments: {} })))
    expect(isAlive(pid)).toBe(true)
    const started = Date.now()
    const pending = client.callTool({ name: 'fx_slow', arguments: { ms: 20_000 } }).then(
      () => 'answered',
      (err: Error) => err.message,
    )
    await new Promise((r) => setTimeout(r, 300))
    process.kill(pid, 'SIGKILL')
    const outcome = await pending
    const elapsed = Date.now() - started - 300
    expect(outcome).not.toBe('answered')
    expect(outcome).toMatch(/fx|Connection closed|upstream/i)
    expect(elapsed).toBeLessThan(2000)
    const after = await eventually(fxState, (s) => s.status === 'ready' && s.generation > before.generation)
    expect(after).toMatchObject({ status: 'ready', upstream: 'running' })
    expect(after.generation).toBeGreaterThan(before.generation)
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('fx_slow')
    const newPid = Number(text(await client.callTool({ name: 'fx_pid', arguments: {} })))
    expect(newPid).not.toBe(pid)
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    expect(log).toMatch(/upstream exited; restarting with backoff.*killed by SIGKILL/)
  })

  it('an upstream that crashes on a call is restarted; the call gets an MCP error, not a hang', async () => {
    const before = await fxState()
    await expect(client.callTool({ name: 'fx_crash', arguments: {} })).rejects.toThrow()
    const after = await eventually(fxState, (s) => s.status === 'ready' && s.generation > before.generation)
    expect(after.generation).toBeGreaterThan(before.generation)
    expect(text(await client.callTool({ name: 'fx_echo', arguments: { message: 'back' } }))).toBe('back')
  })

  it('an upstream that floods stdout past the 16 MiB message cap is cut off and restarted', async () => {
    const before = await fxState()
    await expect(client.callTool({ name: 'fx_flood', arguments: {} })).rejects.toThrow()
    const after = await eventually(fxState, (s) => s.status === 'ready' && s.generation > before.generation)
    expect(after.generation).toBeGreaterThan(before.generation)
    expect(text(await client.callTool({ name: 'fx_echo', arguments: { message: 'after the flood' } }))).toBe('after the flood')
  })

  it('upgrading while 100 calls are in flight: no call fails because of the swap', async () => {
    const oldPid = Number(text(await client.callTool({ name: 'fx_pid', arguments: {} })))
    const calls = Array.from({ length: 100 }, () => client.callTool({ name: 'fx_slow', arguments: { ms: 1500 } }))
    await new Promise((r) => setTimeout(r, 200))
    const upgraded = await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx', version: '2.0.0', variant: 'v2' })])
    expect(upgraded).toMatchObject({ version: '2.0.0', changed: true, state: { status: 'ready' } })
    // the new generation serves new calls while the old one drains
    expect(text(await client.callTool({ name: 'fx_version', arguments: {} }))).toBe('v2')
    const results = await Promise.allSettled(calls)
    const failed = results.filter((r) => r.status === 'rejected')
    expect(failed).toEqual([])
    for (const r of results) expect(text((r as PromiseFulfilledResult<{ content: unknown }>).value)).toBe('slept 1500 ms in v1')
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('fx_added')
    // the drained old upstream is closed
    await eventually(async () => isAlive(oldPid), (alive) => !alive, 10_000)
    expect(isAlive(oldPid)).toBe(false)
  })

  it('a new version whose upstream cannot start fails closed: the previous generation keeps serving', async () => {
    const before = await fxState()
    const broken = faultConnector({ key: 'fx', version: '3.0.0', manifest: { mcp: { transport: 'stdio', command: 'node', args: ['missing.mjs'] } } })
    const res = await tutti(dir, ['connector', 'install', broken, '--json'])
    // the new release is installed, but it is not ready: exit 1 with the upstream's own words
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout).error.message).toMatch(/installed fx 3\.0\.0, but its MCP server failed: exited with code 1 before it answered initialize: Error: Cannot find module .*missing\.mjs/)
    expect(await fxState()).toMatchObject({ status: 'failed', version: '3.0.0', generation: before.generation, reason: expect.stringMatching(/Cannot find module/) })
    expect(text(await client.callTool({ name: 'fx_version', arguments: {} }))).toBe('v2')
    const available = await tuttiJson(dir, ['connector', 'available'])
    expect(available.connectors.find((c: { key: string }) => c.key === 'fx').interfaces[0]).toMatchObject({ kind: 'mcp', status: 'failed' })
    // fixing it (reinstalling a working version) recovers
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx', version: '3.0.1', variant: 'v2' })])
    expect(await fxState()).toMatchObject({ status: 'ready', version: '3.0.1' })
  })

  it('an upstream that never answers initialize does not hold up `connector available`, and is gone after daemon stop', async () => {
    const hang = faultConnector({ key: 'hang', manifest: { mcp: { transport: 'stdio', command: 'node', args: ['-e', 'setInterval(() => {}, 1000)'] } } })
    // --no-wait: the install returns while the daemon is still waiting for the upstream
    expect(await tuttiJson(dir, ['connector', 'install', hang, '--no-wait'])).toMatchObject({ key: 'hang', changed: true })
    await tuttiJson(dir, ['daemon', 'stop'])
    // a fresh daemon reconciles everything at start; the hanging connector must not block discovery
    const started = Date.now()
    const available = await tuttiJson(dir, ['connector', 'available'])
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(available.connectors.find((c: { key: string }) => c.key === 'hang').interfaces[0]).toMatchObject({ kind: 'mcp', status: 'starting' })
    const pid = readDaemonJson(dir)!.pid
    await tuttiJson(dir, ['daemon', 'stop'])
    expect(childPids(pid)).toEqual([])
    await tuttiJson(dir, ['connector', 'uninstall', 'hang'])
    // `daemon stop` revoked every token: this test's agent session prepares again
    binding = (await tuttiJson(dir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'faults'])).mcpServers[0]
    client = await modernClient(binding)
  })

  it('uninstall fences the route: new calls fail with an MCP error and the process group is gone', async () => {
    const pid = Number(text(await client.callTool({ name: 'fx_pid', arguments: {} })))
    await tuttiJson(dir, ['connector', 'uninstall', 'fx'])
    await expect(client.callTool({ name: 'fx_echo', arguments: { message: 'x' } })).rejects.toThrow(/unknown tool/)
    await eventually(async () => isAlive(pid), (alive) => !alive, 10_000)
    expect(isAlive(pid)).toBe(false)
    // only its data stays (uninstall --purge would remove it)
    expect(fs.readdirSync(path.join(dir, 'connectors', 'fx'))).toEqual(['data'])
  })
})
