import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeConnector } from '../support/connector-fixture.js'
import { modernClient } from '../support/mcp-clients.js'
import {
  cleanupState,
  EXAMPLES,
  EXAMPLES_SOURCE,
  snapshotTree,
  tempStateDir,
  tutti,
  tuttiJson,
} from '../support/tutti.js'

/**
 * A release is self-contained: npm dependencies are installed into it before
 * its digest is taken, with the user's npm (here: the warm cache npm ci
 * left, preferred over the registry). Nothing is lost on uninstall unless
 * asked for.
 */
const NPM_ENV = { npm_config_prefer_offline: 'true' }
const MEMORY = '@modelcontextprotocol/server-memory'
const MEMORY_VERSION = JSON.parse(fs.readFileSync(path.join(EXAMPLES_SOURCE, 'notes', 'package.json'), 'utf8'))
  .dependencies[MEMORY]

function releaseDir(stateDir: string, key: string): string {
  const installed = JSON.parse(fs.readFileSync(path.join(stateDir, 'installed.json'), 'utf8'))
  return path.join(stateDir, 'connectors', key, 'releases', installed.connectors[key].digest)
}

describe('self-contained releases', () => {
  let dir: string
  let scratch: string
  beforeAll(() => {
    dir = tempStateDir('deps')
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-deps-'))
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(scratch, { recursive: true, force: true })
  })

  it(
    'a connector with one npm dependency and no node_modules installs ready, ' + 'its release holding the dependency',
    async () => {
      const src = makeConnector(
        {
          schemaVersion: 1,
          key: 'memo',
          name: 'Memo',
          version: '1.0.0',
          mcp: {
            transport: 'stdio',
            command: 'mcp-server-memory',
            env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/memo.jsonl' },
          },
        },
        { 'package.json': JSON.stringify({ name: 'memo', private: true, dependencies: { [MEMORY]: MEMORY_VERSION } }) },
      )
      const started = Date.now()
      // the shell has no mcp-server-memory on PATH: it can only come from the release's own node_modules
      const res = await tuttiJson(dir, ['connector', 'install', src], {
        env: { ...NPM_ENV, PATH: `${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin` },
      })
      console.log(
        `installed memo with its npm dependency in ${Date.now() - started} ms (npm: ${res.dependencies.ms} ms)`,
      )
      expect(res).toMatchObject({ key: 'memo', changed: true, dependencies: { count: 1 }, state: { status: 'ready' } })
      const release = releaseDir(dir, 'memo')
      expect(res.state.command).toBe(path.join(release, 'node_modules', '.bin', 'mcp-server-memory'))
      expect(
        JSON.parse(fs.readFileSync(path.join(release, 'node_modules', MEMORY, 'package.json'), 'utf8')).version,
      ).toBe(MEMORY_VERSION)
      // the source was not touched, and no staging copy is left
      expect(fs.existsSync(path.join(src, 'node_modules'))).toBe(false)
      // tmp/ goes again when the install made it; either way no staging copy is left
      expect(fs.existsSync(path.join(dir, 'tmp')) ? fs.readdirSync(path.join(dir, 'tmp')) : []).toEqual([])
      const binding = (
        await tuttiJson(dir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'deps'])
      ).mcpServers[0]
      const client = await modernClient(binding)
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('memo_read_graph')
      await client.close()
    },
  )

  it(
    'the bundled notes example installs from the repository with npm ci (its lockfile), data survives uninstall ' +
      'and reinstall, --purge removes it',
    async () => {
      const res = await tuttiJson(dir, ['connector', 'install', path.join(EXAMPLES_SOURCE, 'notes')], { env: NPM_ENV })
      expect(res).toMatchObject({ key: 'notes', state: { status: 'ready' }, dependencies: { count: 1 } })
      const binding = (
        await tuttiJson(dir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 'notes'])
      ).mcpServers[0]
      let client = await modernClient(binding)
      await client.callTool({
        name: 'notes_create_entities',
        arguments: { entities: [{ name: 'keep-me', entityType: 'note', observations: ['precious'] }] },
      })
      await client.close()
      const uninstalled = await tutti(dir, ['connector', 'uninstall', 'notes'])
      expect(uninstalled.stdout).toMatch(/uninstalled notes; its data is kept in .*connectors\/notes\/data/)
      expect(fs.readFileSync(path.join(dir, 'connectors', 'notes', 'data', 'memory.jsonl'), 'utf8')).toContain(
        'keep-me',
      )
      // reinstalled from the suite's copy that already holds the dependencies: the data is what matters here, not npm
      // again
      await tuttiJson(dir, ['connector', 'install', path.join(EXAMPLES, 'notes')])
      client = await modernClient(binding)
      expect(JSON.stringify((await client.callTool({ name: 'notes_read_graph', arguments: {} })).content)).toContain(
        'precious',
      )
      await client.close()
      expect((await tutti(dir, ['connector', 'uninstall', 'notes', '--purge'])).stdout).toMatch(
        /uninstalled notes; its data was deleted/,
      )
      expect(fs.existsSync(path.join(dir, 'connectors', 'notes'))).toBe(false)
    },
  )

  it('lifecycle scripts of dependencies run only when the manifest sets npm.scripts', async () => {
    // a local tarball dependency whose postinstall leaves a mark: no registry involved
    const pkg = path.join(scratch, 'marker')
    fs.mkdirSync(pkg)
    fs.writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({
        name: 'marker',
        version: '1.0.0',
        scripts: { postinstall: "node -e \"require('fs').writeFileSync('postinstall-ran', '')\"" },
      }),
    )
    execFileSync('npm', ['pack', '--pack-destination', scratch, '--loglevel=error'], { cwd: pkg, stdio: 'ignore' })
    const make = (key: string, scripts?: boolean) =>
      makeConnector(
        {
          schemaVersion: 1,
          key,
          name: key,
          version: '1.0.0',
          cli: { entrypoint: 'cli.mjs' },
          ...(scripts === undefined ? {} : { npm: { scripts } }),
        },
        {
          'cli.mjs': 'console.log(1)\n',
          'package.json': JSON.stringify({
            name: key,
            private: true,
            dependencies: { marker: `file:${path.join(scratch, 'marker-1.0.0.tgz')}` },
          }),
        },
      )
    await tuttiJson(dir, ['connector', 'install', make('quiet')], { env: NPM_ENV })
    expect(fs.existsSync(path.join(releaseDir(dir, 'quiet'), 'node_modules', 'marker', 'package.json'))).toBe(true)
    expect(fs.existsSync(path.join(releaseDir(dir, 'quiet'), 'node_modules', 'marker', 'postinstall-ran'))).toBe(false)
    await tuttiJson(dir, ['connector', 'install', make('scripted', true)], { env: NPM_ENV })
    expect(fs.existsSync(path.join(releaseDir(dir, 'scripted'), 'node_modules', 'marker', 'postinstall-ran'))).toBe(
      true,
    )
  })

  it("npm failing: exit 1 with npm's own message, and nothing changes on disk", async () => {
    // tmp/ as any earlier install leaves it: on a fresh state dir the failed install still creates tmp/ (reported)
    fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true, mode: 0o700 })
    const before = snapshotTree(dir)
    const src = makeConnector(
      { schemaVersion: 1, key: 'broken', name: 'Broken', version: '1.0.0', cli: { entrypoint: 'cli.mjs' } },
      {
        'cli.mjs': 'console.log(1)\n',
        'package.json': JSON.stringify({
          name: 'broken',
          private: true,
          dependencies: { missing: `file:${path.join(scratch, 'no-such.tgz')}` },
        }),
      },
    )
    const res = await tutti(dir, ['connector', 'install', src, '--json'], { env: NPM_ENV })
    expect(res.code).toBe(1)
    const error = JSON.parse(res.stdout).error
    expect(error.code).toBe('DEPENDENCIES_FAILED')
    expect(error.message).toMatch(
      /npm install failed for connector "broken" \(exit \d+\); nothing was installed:\n[\s\S]*no-such\.tgz/,
    )
    expect(snapshotTree(dir)).toEqual(before)
  })
})
