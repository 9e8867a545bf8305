import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, until } from '../support/eventually.js'
import { FAULT_TOOLS, faultConnector } from '../support/fixture-connector.js'
import { installed, prepared, uninstalled } from '../support/in-process.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { childPids, cleanupState, connectorState, readDaemonJson, tempStateDir, tuttiJson } from '../support/tutti.js'

const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text

/*
 * A stdio connector without "activation" is lazy by cache: its first start lists its tools into
 * tool-cache/<key>.json, and every daemon start after that publishes the route from the cache
 * with no process; the first call starts the upstream.
 */
describe('every stdio connector lazy by cache', () => {
  let dir: string
  let binding: Binding
  const state = (key: string) => connectorState(dir, key)
  const cacheFile = (key: string) => path.join(dir, 'tool-cache', `${key}.json`)
  const daemonChildren = () => childPids(readDaemonJson(dir)!.pid)
  /** A daemon start as a user gets one: the old daemon stopped, the next command forks a new one. */
  const restartDaemon = async () => {
    await tuttiJson(dir, ['daemon', 'stop'])
    return tuttiJson(dir, ['daemon', 'start'])
  }
  /** Sessions are revoked by `daemon stop`; each test prepares its own after its restart. */
  const prepare = async () => (await prepared(dir, { session: 'cache' })).mcpServers[0] as Binding

  beforeAll(async () => {
    dir = tempStateDir('lazy-cache')
    await installed(dir, faultConnector({ key: 'cached' }))
    await installed(dir, faultConnector({ key: 'kept', activation: 'eager' }))
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it(
    'the first start lists and remembers the tools; ' + 'a daemon start publishes them (both eras) with no process',
    async () => {
      const cache = JSON.parse(fs.readFileSync(cacheFile('cached'), 'utf8'))
      expect(cache.tools.map((t: { name: string }) => t.name).sort()).toEqual(FAULT_TOOLS.map((t) => t.name).sort())
      // keyed by the desired state, never by what the credentials and settings are
      expect(cache.spec).toMatch(/^[0-9a-f]{64}$/)
      const started = await restartDaemon()
      const mine = started.connectors.find((c: { key: string }) => c.key === 'cached')
      expect(mine).toMatchObject({
        status: 'ready',
        activation: 'cached',
        upstream: 'stopped',
        tools: FAULT_TOOLS.length,
        starts: 0,
      })
      binding = await prepare()
      for (const make of [modernClient, legacyClient]) {
        const client = await make(binding)
        const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith('cached_'))
        expect(tools.map((t) => t.name).sort()).toEqual(FAULT_TOOLS.map((t) => `cached_${t.name}`).sort())
        await client.close()
      }
      const kept = await state('kept')
      // the eager one runs; the cached one has no process
      expect(daemonChildren()).toEqual([kept.pid])
      expect(await state('cached')).toMatchObject({ upstream: 'stopped', starts: 0 })
    },
  )

  it('the first call starts the upstream once and is answered; the same table makes no new generation', async () => {
    await restartDaemon()
    binding = await prepare()
    const before = await state('cached')
    const client = await modernClient(binding)
    const changes: unknown[] = []
    client.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n))
    const sub = await client.listen({ toolsListChanged: true })
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.callTool({ name: 'cached_echo', arguments: { message: `m${i}` } })),
    )
    expect(results.map(text)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`))
    const after = await state('cached')
    expect(after).toMatchObject({ status: 'ready', upstream: 'running', starts: 1, generation: before.generation })
    expect(daemonChildren()).toContain(after.pid)
    await sub.close()
    await client.close()
    expect(changes).toEqual([])
  })

  it(
    'an upstream whose tools changed since the cache: ' +
      'exactly one new generation and one list_changed, and the cache follows',
    async () => {
      await tuttiJson(dir, ['daemon', 'stop'])
      // the table the upstream listed last time lacked "grow" (as if the server changed since)
      const cache = JSON.parse(fs.readFileSync(cacheFile('cached'), 'utf8'))
      cache.tools = cache.tools.filter((t: { name: string }) => t.name !== 'grow')
      fs.writeFileSync(cacheFile('cached'), JSON.stringify(cache))
      await tuttiJson(dir, ['daemon', 'start'])
      binding = await prepare()
      const before = await state('cached')
      expect(before.tools).toBe(FAULT_TOOLS.length - 1)
      const client = await modernClient(binding)
      const changes: unknown[] = []
      client.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n))
      const sub = await client.listen({ toolsListChanged: true })
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('cached_grow')
      expect(text(await client.callTool({ name: 'cached_echo', arguments: { message: 'first' } }))).toBe('first')
      expect(await until(() => changes.length >= 1)).toBe(true)
      const after = await state('cached')
      expect(after.generation).toBe(before.generation + 1)
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('cached_grow')
      // the cache is written after the commit that clients are told about: wait for it, not for a time
      const cached = () =>
        JSON.parse(fs.readFileSync(cacheFile('cached'), 'utf8')).tools.map((t: { name: string }) => t.name)
      expect(await eventually(cached, (names: string[]) => names.includes('grow'))).toContain('grow')
      // a second call changes nothing more: the generation is the count of what clients could see change
      await client.callTool({ name: 'cached_echo', arguments: { message: 'second' } })
      expect(await state('cached')).toMatchObject({ generation: after.generation, starts: 1 })
      await sub.close()
      await client.close()
    },
  )

  it('an upgrade is a cache miss: the new release is started to list its tools', async () => {
    await installed(dir, faultConnector({ key: 'cached', version: '2.0.0', variant: 'v2' }))
    const s = await state('cached')
    expect(s).toMatchObject({ status: 'ready', version: '2.0.0', upstream: 'running' })
    const cache = JSON.parse(fs.readFileSync(cacheFile('cached'), 'utf8'))
    expect(cache.tools.map((t: { name: string }) => t.name)).toContain('added')
  })

  it('uninstall removes the cache with the release', async () => {
    await installed(dir, faultConnector({ key: 'gone' }))
    expect(fs.existsSync(cacheFile('gone'))).toBe(true)
    await uninstalled(dir, 'gone')
    expect(fs.existsSync(cacheFile('gone'))).toBe(false)
  })
})
