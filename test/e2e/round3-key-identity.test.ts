import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Bystander } from '../support/bystander.js'
import { faultConnector } from '../support/fixture-connector.js'
import { connected, installed } from '../support/in-process.js'
import { pluginPackage } from '../support/package-sources.js'
import { cleanupState, connectorState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

/*
 * A key is a connector's address, not its identity. A plugin named `gh` installed over the user's `gh`
 * connector started with the user's stored GH_TOKEN. Another package under a taken key is refused
 * (exit 2, naming both) unless --replace, and a replacement starts with nothing of the old one.
 */
const TOKEN = 'gh-token-9f1c2e7a-identity'

/** A Claude Code plugin named `gh` whose server reads GH_TOKEN from the user's environment. */
function ghPlugin(): string {
  const dir = pluginPackage('claude', 'gh')
  const file = path.join(dir, '.mcp.json')
  const config = JSON.parse(fs.readFileSync(file, 'utf8'))
  config.mcpServers.main.env.GH_TOKEN = '${GH_TOKEN}'
  fs.writeFileSync(file, JSON.stringify(config))
  return dir
}

/** An npm package directory `@x/gh-mcp` (no tutti manifest) whose server is the fault fixture. */
function npmGh(): string {
  const dir = faultConnector({ key: 'ghnpm' })
  fs.rmSync(path.join(dir, 'tutti-connector.json'))
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: '@x/gh-mcp', version: '3.0.0', bin: 'server.mjs' }),
  )
  return dir
}

const installedJson = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8'))
const credentialsText = (dir: string) => fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')

describe('another package under a taken key inherits nothing', () => {
  let dir: string
  let bystander: Bystander
  beforeAll(async () => {
    dir = tempStateDir('key-identity')
    bystander = await Bystander.start(dir)
    await installed(dir, faultConnector({ key: 'gh', auth: ['GH_TOKEN'] }))
    const connect = await connected(dir, 'gh', { env: { GH_TOKEN: TOKEN } })
    expect(connect.state.status).toBe('ready')
  })
  afterAll(() => cleanupState(dir))

  it.each([
    ['a Claude Code plugin named gh', ghPlugin, [], 'Claude Code plugin "gh"'],
    ['npm package @x/gh-mcp under --key gh', npmGh, ['--key', 'gh'], 'npm package "@x/gh-mcp"'],
  ])('%s exits 2 naming both; the disk is unchanged', async (_label, make, flags, named) => {
    const source = make()
    const before = snapshotTree(dir)
    const { result: out, watched } = await bystander.during(
      tutti(dir, ['connector', 'install', source, ...flags, '--json']),
    )
    expect(out.code, out.stdout + out.stderr).toBe(2)
    const error = JSON.parse(out.stdout).error
    expect(error.code).toBe('CONNECTOR_KEY_TAKEN')
    expect(error.message).toContain('connector "gh" is installed from tutti release "Fixture gh"')
    expect(error.message).toContain(`and this is ${named}: another package`)
    expect(error.message).toContain('--replace')
    expect(snapshotTree(dir)).toEqual(before)
    expect((await connectorState(dir, 'gh')).status).toBe('ready')
    expect(watched.statuses.every((s) => s === 200)).toBe(true)
    expect(watched.missingTools).toBe(0)
  })

  it('a new version of the same release keeps its credentials', async () => {
    const out = await tuttiJson(dir, [
      'connector',
      'install',
      faultConnector({ key: 'gh', auth: ['GH_TOKEN'], version: '1.1.0' }),
    ])
    expect(out).toMatchObject({ key: 'gh', version: '1.1.0', changed: true, state: { status: 'ready' } })
    expect(out.replaced).toBeUndefined()
    expect(credentialsText(dir)).toContain(TOKEN)
  })

  it('--purge without --replace is refused, and changes nothing', async () => {
    const before = snapshotTree(dir)
    const out = await tutti(dir, ['connector', 'install', ghPlugin(), '--purge', '--json'])
    expect(out.code).toBe(2)
    expect(JSON.parse(out.stdout).error.message).toBe(
      '--purge goes with --replace: it deletes what the replaced connector leaves',
    )
    expect(snapshotTree(dir)).toEqual(before)
  })

  it('--replace: the plugin starts without GH_TOKEN, says so, and the old credentials are kept aside', async () => {
    const dataFile = path.join(dir, 'connectors/gh/data/notes.txt')
    fs.mkdirSync(path.dirname(dataFile), { recursive: true })
    fs.writeFileSync(dataFile, "the old connector's data")
    const out = await tutti(dir, ['connector', 'install', ghPlugin(), '--replace', '--json'])
    expect(out.code, out.stdout + out.stderr).toBe(0)
    const result = JSON.parse(out.stdout)
    expect(result.replaced).toMatchObject({
      source: { kind: 'tutti release', name: 'Fixture gh' },
      version: '1.1.0',
      credentials: ['GH_TOKEN'],
      oauthGrant: false,
      data: true,
    })
    expect(out.stderr).toContain('replaced tutti release "Fixture gh" 1.1.0: gh starts without its credentials')
    expect(out.stderr).toContain(`are kept in ${result.replaced.keptIn}`)
    // the new server does not start with the old token: it waits for its own
    expect(result.state.status).toBe('needs-auth')
    expect(JSON.stringify(await connectorState(dir, 'gh'))).not.toContain(TOKEN)
    expect(credentialsText(dir)).not.toContain(TOKEN)
    expect(fs.existsSync(dataFile)).toBe(false)
    expect(installedJson(dir).connectors.gh.source).toEqual({ kind: 'Claude Code plugin', name: 'gh' })
    // kept aside, private, in the live stores' formats
    const kept = result.replaced.keptIn as string
    expect(fs.statSync(path.join(kept, 'credentials.json')).mode & 0o077).toBe(0)
    expect(JSON.parse(fs.readFileSync(path.join(kept, 'credentials.json'), 'utf8')).connectors.gh.GH_TOKEN).toBe(TOKEN)
    expect(fs.readFileSync(path.join(kept, 'data/notes.txt'), 'utf8')).toBe("the old connector's data")
    expect(JSON.parse(fs.readFileSync(path.join(kept, 'connector.json'), 'utf8')).replacedBy).toEqual({
      kind: 'Claude Code plugin',
      name: 'gh',
    })
  })

  it('--replace --purge deletes what the replaced one leaves; uninstall --purge removes what was kept', async () => {
    await connected(dir, 'gh', { env: { GH_TOKEN: 'plugin-token-2' } })
    const out = await tutti(dir, ['connector', 'install', npmGh(), '--key', 'gh', '--replace', '--purge', '--json'])
    expect(out.code, out.stdout + out.stderr).toBe(0)
    const result = JSON.parse(out.stdout)
    expect(result.replaced).toMatchObject({
      source: { kind: 'Claude Code plugin', name: 'gh' },
      credentials: ['GH_TOKEN'],
    })
    expect(result.replaced.keptIn).toBeUndefined()
    expect(out.stderr).toContain('were deleted (--purge)')
    expect(credentialsText(dir)).not.toContain('plugin-token-2')
    // one set-aside directory: the first replace's, none for this one
    expect(fs.readdirSync(path.join(dir, 'connectors/gh/replaced'))).toHaveLength(1)
    await tuttiJson(dir, ['connector', 'uninstall', 'gh', '--purge'])
    expect(fs.existsSync(path.join(dir, 'connectors/gh/replaced'))).toBe(false)
    const everything = Object.values(snapshotTree(dir)).join('\n')
    expect(everything).not.toContain(TOKEN)
  })
})
