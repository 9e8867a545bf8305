import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { serverPackage } from '../support/npm-fixtures.js'
import { NpmRegistryFixture } from '../support/npm-registry.js'
import { cleanupState, connectorState, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

/*
 * Updates of connectors installed from npm:, against a loopback registry (the public one is not
 * reached by tests): an unchanged reinstall fetches nothing (an exact version asks nothing at all, a
 * range one metadata query), `outdated` compares, `update` installs the newer version the way it was
 * installed, and a change of version says which way it went.
 */
describe('connector updates', () => {
  let dir: string
  let registry: NpmRegistryFixture
  let binding: Binding
  const env = () => registry.env()
  const run = (args: string[]) => tutti(dir, args, { env: env() })
  const json = (args: string[]) => tuttiJson(dir, args, { env: env() })
  const hello = async (tool: string) => {
    const client = await modernClient(binding)
    const res = await client.callTool({ name: tool, arguments: {} })
    await client.close()
    return (res.content as Array<{ text: string }>)[0]!.text
  }
  const asked = async (fn: () => Promise<unknown>) => {
    const before = registry.requests.length
    await fn()
    return registry.requests.slice(before)
  }

  beforeAll(async () => {
    dir = tempStateDir('updates')
    registry = await new NpmRegistryFixture().start()
    registry.publish(serverPackage('upd-echo', '1.0.0'))
    const prepare = ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'updates']
    binding = (await tuttiJson(dir, prepare)).mcpServers[0]
  })
  afterAll(async () => {
    await cleanupState(dir)
    await registry.close()
  })

  it('an unchanged reinstall fetches nothing: no query for a version, one for a range', async () => {
    const first = await run(['connector', 'install', 'npm:upd-echo@1.0.0'])
    expect(first.stdout).toBe('installed upd-echo 1.0.0 (ready)\n')
    let again: Awaited<ReturnType<typeof run>> | undefined
    expect(await asked(async () => (again = await run(['connector', 'install', 'npm:upd-echo@1.0.0'])))).toEqual([])
    expect(again!.stdout).toBe('already installed upd-echo 1.0.0 (ready)\n')
    // another spec is another way of installing it: fetched once, then recorded
    const ranged = await run(['connector', 'install', 'npm:upd-echo@^1.0.0'])
    expect(ranged.stdout).toBe('already installed upd-echo 1.0.0 (ready)\n')
    const started = Date.now()
    const requests = await asked(async () => (again = await run(['connector', 'install', 'npm:upd-echo@^1.0.0'])))
    console.log(`unchanged reinstall of npm:upd-echo@^1.0.0: ${Date.now() - started} ms`)
    expect(requests).toEqual(['packument upd-echo'])
    expect(again!.stdout).toBe('already installed upd-echo 1.0.0 (ready)\n')
    expect(await hello('upd-echo_hello')).toBe('upd-echo 1.0.0')
  })

  it('outdated lists a newer version; update installs it, keeping settings; then it is up to date', async () => {
    registry.publish(serverPackage('upd-echo', '1.1.0'))
    registry.publish(serverPackage('upd-echo', '2.0.0'))
    const rows = (await json(['connector', 'outdated'])).connectors
    const source = 'npm:upd-echo@^1.0.0'
    const row = { key: 'upd-echo', installed: '1.0.0', wanted: '1.1.0', latest: '2.0.0', source, outdated: true }
    expect(rows).toEqual([row])
    const table = await run(['connector', 'outdated'])
    expect(table.stdout.split('\n')[0]).toMatch(/^key\s+installed\s+wanted\s+latest\s+source$/)
    expect(table.stdout.split('\n')[1]).toMatch(/^upd-echo\s+1\.0\.0\s+1\.1\.0\s+2\.0\.0\s+npm:upd-echo@\^1\.0\.0$/)
    const updated = await run(['connector', 'update', 'upd-echo'])
    expect(updated.stdout, updated.stderr).toBe('updated upd-echo 1.0.0 → 1.1.0 (ready)\n')
    expect(await hello('upd-echo_hello')).toBe('upd-echo 1.1.0')
    expect((await run(['connector', 'update', '--all'])).stdout).toBe('upd-echo is up to date (1.1.0; latest 2.0.0)\n')
    const installed = JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8'))
    expect(installed.connectors['upd-echo'].origin).toEqual({ source: 'npm:upd-echo@^1.0.0' })
  })

  it('a downgrade and an upgrade say so, in human and --json output', async () => {
    const downgraded = await run(['connector', 'install', 'npm:upd-echo@1.0.0'])
    expect(downgraded.stdout).toBe('downgraded upd-echo 1.1.0 → 1.0.0 (ready)\n')
    const up = await json(['connector', 'install', 'npm:upd-echo@2.0.0'])
    expect(up).toMatchObject({ key: 'upd-echo', version: '2.0.0', previousVersion: '1.0.0', change: 'upgraded' })
    const down = await json(['connector', 'install', 'npm:upd-echo@1.1.0'])
    expect(down).toMatchObject({ version: '1.1.0', previousVersion: '2.0.0', change: 'downgraded' })
    expect(await hello('upd-echo_hello')).toBe('upd-echo 1.1.0')
  })

  it('update keeps --allow-scripts: the newer native version is built too', async () => {
    registry.publish(serverPackage('native-upd', '1.0.0', { native: true }))
    const first = await json(['connector', 'install', 'npm:native-upd', '--allow-scripts'])
    expect(first).toMatchObject({ key: 'native-upd', change: 'installed', state: { status: 'ready' } })
    registry.publish(serverPackage('native-upd', '1.0.1', { native: true }))
    const out = await json(['connector', 'update', 'native-upd'])
    const ready = { status: 'ready' }
    const updated = { key: 'native-upd', from: '1.0.0', to: '1.0.1', change: 'upgraded', state: ready }
    expect(out.updated).toMatchObject([updated])
    expect(await hello('native-upd_hello')).toBe('native-upd 1.0.1 native-ok')
  })

  it('a connector not installed from npm: is refused by name, and nothing is listed for it', async () => {
    const local = serverPackage('local-echo', '1.0.0')
    await json(['connector', 'install', local])
    const res = await run(['connector', 'update', 'local-echo'])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain(`connector "local-echo" was installed from ${local}, not from npm:<name>`)
    const keys = (await json(['connector', 'outdated'])).connectors.map((r: { key: string }) => r.key)
    expect(keys).toEqual(['native-upd', 'upd-echo'])
    expect((await run(['connector', 'update'])).stderr).toContain('name the connectors to update, or --all')
  })
  it(
    'a server.json npm package: outdated compares its package, ' + 'update installs the newer, the file is kept',
    async () => {
      registry.publish(serverPackage('sj-echo', '1.0.0'))
      const doc = {
        name: 'io.example/sj-echo',
        description: 'a server.json fixture',
        version: '1.0.0',
        packages: [{ registryType: 'npm', identifier: 'sj-echo', version: '1.0.0', transport: { type: 'stdio' } }],
      }
      const file = path.join(fs.mkdtempSync(path.join(dir, 'sj-')), 'server.json')
      fs.writeFileSync(file, JSON.stringify(doc))
      const first = await run(['connector', 'install', file, '--key', 'sj', '--env', 'SJ_LABEL=kept'])
      expect(first.stdout, first.stderr).toBe('installed sj 1.0.0 (ready)\n')
      expect((await connectorState(dir, 'sj')).settings).toEqual({ SJ_LABEL: 'kept' })
      expect((await json(['connector', 'outdated', 'sj'])).connectors).toMatchObject([
        { key: 'sj', installed: '1.0.0', wanted: '1.0.0', latest: '1.0.0', source: file, outdated: false },
      ])
      registry.publish(serverPackage('sj-echo', '1.2.0'))
      const row = { key: 'sj', installed: '1.0.0', wanted: '1.2.0', latest: '1.2.0', source: file, outdated: true }
      expect((await json(['connector', 'outdated'])).connectors).toContainEqual(row)
      const updated = await run(['connector', 'update', 'sj'])
      expect(updated.stdout, updated.stderr).toBe('updated sj 1.0.0 → 1.2.0 (ready)\n')
      expect(await hello('sj_hello')).toBe('sj-echo 1.2.0')
      expect((await connectorState(dir, 'sj')).settings).toEqual({ SJ_LABEL: 'kept' })
      expect((await run(['connector', 'update', 'sj'])).stdout).toBe('sj is up to date (1.2.0)\n')
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(doc)
      // installing the file again is asking for its pin: a downgrade, said as one
      expect((await run(['connector', 'install', file, '--key', 'sj'])).stdout).toBe(
        'downgraded sj 1.2.0 → 1.0.0 (ready)\n',
      )
    },
  )

  it('a server.json remote cannot be compared, and says why by name', async () => {
    const doc = {
      name: 'io.example/sj-remote',
      description: 'a remote',
      version: '3.0.0',
      remotes: [{ type: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }],
    }
    const file = path.join(fs.mkdtempSync(path.join(dir, 'sj-')), 'server.json')
    fs.writeFileSync(file, JSON.stringify(doc))
    const installed = await run(['connector', 'install', file, '--key', 'sjr', '--no-wait'])
    expect(installed.code, installed.stderr).toBe(0)
    const res = await run(['connector', 'outdated', 'sjr'])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain(`connector "sjr" cannot be compared: ${file}: remotes.0 is a remote server`)
  })
})
