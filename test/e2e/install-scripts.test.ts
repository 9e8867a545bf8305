import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { serverPackage } from '../support/npm-fixtures.js'
import { cleanupState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

/*
 * Install scripts run only by consent. A package whose binding.gyp must be built (a native addon, as
 * better-sqlite3's is) fails to start without it, with a reason that says so and names --allow-scripts;
 * with the flag it is built offline against the local node headers, and the choice is recorded.
 */
// node-gyp would download headers from here if it were not pointed at the local ones: nothing listens
const OFFLINE = { npm_config_disturl: 'http://127.0.0.1:9/', npm_config_prefer_offline: 'true' }
const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text

describe('install scripts by consent', () => {
  let dir: string
  let pkg: string
  let binding: Binding
  beforeAll(async () => {
    dir = tempStateDir('scripts')
    pkg = serverPackage('native-echo', '1.0.0', { native: true })
    const prepare = ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'scripts']
    binding = (await tuttiJson(dir, prepare)).mcpServers[0]
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(pkg, { recursive: true, force: true })
  })

  it('--dry-run lists the package that has an install step, and changes nothing', async () => {
    const before = snapshotTree(dir)
    const res = await tuttiJson(dir, ['connector', 'install', pkg, '--dry-run'])
    expect(res.installScripts).toEqual({ packages: [{ name: '.', scripts: ['binding.gyp'] }], run: false })
    const human = await tutti(dir, ['connector', 'install', pkg, '--dry-run', '--allow-scripts'])
    expect(human.stderr).toContain('install scripts: the package itself (binding.gyp); they would run')
    expect(snapshotTree(dir)).toEqual(before)
  })

  it('without --allow-scripts the unbuilt native module is the reason, naming the flag', async () => {
    const res = await tutti(dir, ['connector', 'install', pkg], { env: OFFLINE })
    expect(res.code, res.stdout).toBe(1)
    expect(res.stderr).toMatch(/a native module is not built \(Cannot find module '\.\/build\/Release\/addon\.node'\)/)
    expect(res.stderr).toContain('install the connector again with --allow-scripts')
  })

  it('with --allow-scripts it is built offline, serves, and the consent is recorded', async () => {
    const res = await tuttiJson(dir, ['connector', 'install', pkg, '--allow-scripts'], { env: OFFLINE })
    expect(res).toMatchObject({ key: 'native-echo', state: { status: 'ready' } })
    const client = await modernClient(binding)
    const answer = await client.callTool({ name: 'native-echo_hello', arguments: {} })
    expect(text(answer)).toBe('native-echo 1.0.0 native-ok')
    await client.close()
    const installed = JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8'))
    expect(installed.connectors['native-echo'].origin).toEqual({ source: pkg, allowScripts: true })
    const release = path.join(dir, 'connectors', 'native-echo', 'releases', res.digest)
    expect(fs.existsSync(path.join(release, 'build', 'Release', 'addon.node'))).toBe(true)
    // the user's directory was never written to
    expect(fs.existsSync(path.join(pkg, 'build'))).toBe(false)
  })
})
