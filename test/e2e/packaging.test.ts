import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { copyCloneOf, run, tarballEntries, userEnv } from '../support/package-install.js'
import { cleanupState, daemonPids, REPO, tempStateDir } from '../support/tutti.js'

const HELLO_MANIFEST = {
  schemaVersion: 1,
  key: 'hello',
  name: 'Hello',
  version: '1.0.0',
  auth: { kind: 'none' },
  cli: { entrypoint: 'bin/hello.js' },
}

/** A CLI-only connector: nothing for the daemon to spawn, so the install path alone is tested. */
function writeHelloConnector(dir: string, key = HELLO_MANIFEST.key): void {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'tutti-connector.json'), JSON.stringify({ ...HELLO_MANIFEST, key }, null, 2))
  const bin = path.join(dir, 'bin', 'hello.js')
  fs.writeFileSync(bin, "#!/usr/bin/env node\nconsole.log(`hello ${process.argv.slice(2).join(' ')}`)\n")
  fs.chmodSync(bin, 0o755)
}

describe("a fresh clone's `npm pack` plus a global install runs `connector available`", () => {
  let tmp: string
  let clone: string
  let prefix: string
  let state: string | undefined
  let tarball: string
  let installed: string
  let cloneHadDist: boolean
  // a user's shell: the global prefix, node, the system; nothing of the repo
  let shellEnv: NodeJS.ProcessEnv
  const shell = (args: string[]) => run('tutti', args, { cwd: tmp, env: shellEnv })

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-pack-'))
    clone = path.join(tmp, 'clone')
    const copied = copyCloneOf(REPO, clone)
    cloneHadDist = fs.existsSync(path.join(clone, 'dist'))
    // the build's devDependencies (tsc, oclif) without a 1 GB `npm ci`
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(clone, 'node_modules'), 'dir')

    const out = path.join(tmp, 'out')
    fs.mkdirSync(out)
    let started = performance.now()
    const pack = await run('npm', ['pack', '--pack-destination', out], { cwd: clone, env: userEnv({}) })
    console.log(`npm pack of ${copied} files: ${Math.round(performance.now() - started)} ms`)
    if (pack.code !== 0) throw new Error(`npm pack exited ${pack.code}:\n${pack.stdout}\n${pack.stderr}`)
    const tgz = fs.readdirSync(out).filter((f) => f.endsWith('.tgz'))
    expect(tgz).toHaveLength(1)
    tarball = path.join(out, tgz[0]!)

    prefix = path.join(tmp, 'prefix')
    started = performance.now()
    const install = await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], {
      cwd: tmp,
      env: userEnv({ npm_config_prefer_offline: 'true' }),
    })
    console.log(`npm install -g: ${Math.round(performance.now() - started)} ms`)
    if (install.code !== 0)
      throw new Error(`npm install -g exited ${install.code}:\n${install.stdout}\n${install.stderr}`)
    installed = path.join(prefix, 'lib', 'node_modules', 'tutti')

    state = tempStateDir('pack-state')
    shellEnv = {
      HOME: process.env.HOME,
      PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
      TUTTI_STATE_DIR: state,
    }
  }, 240_000)

  afterAll(async () => {
    if (state) await cleanupState(state)
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('prepack built dist/ inside the clone, which had none', () => {
    expect(cloneHadDist).toBe(false)
    expect(fs.existsSync(path.join(clone, 'dist', 'commands', 'connector', 'available.js'))).toBe(true)
    expect(fs.existsSync(path.join(clone, 'oclif.manifest.json'))).toBe(true)
  })

  it('the tarball holds the CLI, its library types, the manifest and the examples, nothing else', () => {
    const entries = tarballEntries(tarball)
    console.log(`tarball: ${fs.statSync(tarball).size} bytes, ${entries.length} files`)
    for (const needed of [
      'bin/run.cjs',
      'bin/run.js',
      'bin/lean-entry.cjs',
      'dist/cli/available-lean.cjs',
      'dist/daemon/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/commands/connector/available.js',
      'oclif.manifest.json',
      'README.md',
      'package.json',
      'examples/connectors/notes/tutti-connector.json',
    ]) {
      expect(entries, needed).toContain(needed)
    }
    // the daemon's entry and the one bundle it runs (named after its content)
    expect(entries.filter((e) => e.startsWith('dist/daemon/')).sort()).toEqual([
      expect.stringMatching(/^dist\/daemon\/daemon-[0-9a-f]{16}\.cjs$/),
      'dist/daemon/main.js',
    ])
    expect(
      entries.filter(
        (e) => !/^(bin\/|dist\/|examples\/connectors\/|oclif\.manifest\.json$|README\.md$|package\.json$)/.test(e),
      ),
    ).toEqual([])
    expect(
      entries.filter(
        (e) =>
          e.endsWith('.map') || (e.endsWith('.ts') && !e.endsWith('.d.ts')) || /(^|\/)(test|node_modules)\//.test(e),
      ),
    ).toEqual([])
    const manifest = JSON.parse(fs.readFileSync(path.join(clone, 'oclif.manifest.json'), 'utf8'))
    expect(Object.keys(manifest.commands)).toContain('connector:available')
  })

  it('the global bin is the installed package, and the examples shipped with it', () => {
    expect(fs.realpathSync(path.join(prefix, 'bin', 'tutti'))).toBe(
      fs.realpathSync(path.join(installed, 'bin', 'run.cjs')),
    )
    expect(fs.existsSync(path.join(installed, 'examples', 'connectors', 'notes', 'tutti-connector.json'))).toBe(true)
  })

  it('`tutti connector available --json` on an empty state lists nothing and exits 0', async () => {
    // a state dir of its own: the other tests install into the shared one
    const empty = tempStateDir('pack-empty')
    const res = await run('tutti', ['connector', 'available', '--json'], {
      cwd: tmp,
      env: { ...shellEnv, TUTTI_STATE_DIR: empty },
    })
    await cleanupState(empty)
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(JSON.parse(res.stdout)).toEqual({ connectors: [] })
  })

  it('a CLI-only connector installs, is listed and its shim runs', async () => {
    const fixture = path.join(tmp, 'hello-connector')
    writeHelloConnector(fixture)
    const install = await shell(['connector', 'install', fixture, '--json'])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    expect(JSON.parse(install.stdout)).toMatchObject({ key: 'hello', version: '1.0.0' })

    const available = await shell(['connector', 'available', '--json'])
    expect(available.code).toBe(0)
    const { connectors } = JSON.parse(available.stdout)
    expect(connectors.map((c: { key: string }) => c.key)).toContain('hello')
    expect(connectors.find((c: { key: string }) => c.key === 'hello')).toMatchObject({
      key: 'hello',
      interfaces: [{ kind: 'cli', command: 'tutti-connector-hello', status: 'ready' }],
    })

    const hello = await run(path.join(state!, 'bin', 'tutti-connector-hello'), ['from', 'the shim'], {
      cwd: tmp,
      env: shellEnv,
    })
    expect(hello).toEqual({ code: 0, stdout: 'hello from the shim\n', stderr: '' })
  })

  it("the daemon runs the installed package's bundle, and the paths it writes point into that package", async () => {
    const fixture = path.join(tmp, 'bundled-connector')
    writeHelloConnector(fixture, 'bundled')
    const install = await shell(['connector', 'install', fixture, '--json'])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const pkg = fs.realpathSync(installed)
    const pids = daemonPids(state!)
    expect(pids).toHaveLength(1)
    expect(fs.readFileSync(`/proc/${pids[0]}/cmdline`, 'utf8').split('\0')[1]).toBe(
      path.join(pkg, 'dist', 'daemon', 'main.js'),
    )
    // made from import.meta.url inside the bundle: each module's own file in the installed dist/ (and bin/)
    expect(fs.readFileSync(path.join(state!, 'bin', 'tutti'), 'utf8')).toContain(
      `'${path.join(pkg, 'bin', 'run.cjs')}' "$@"`,
    )
    const target = fs.readFileSync(path.join(state!, 'shims', 'bundled', 'g1.cjs'), 'utf8')
    expect(target).toContain(`require(${JSON.stringify(path.join(pkg, 'dist', 'runtime', 'shims', 'launcher.cjs'))})`)
    expect(
      await run(path.join(state!, 'bin', 'tutti-connector-bundled'), ['from', 'the bundle'], {
        cwd: tmp,
        env: shellEnv,
      }),
    ).toEqual({ code: 0, stdout: 'hello from the bundle\n', stderr: '' })
    const status = JSON.parse((await shell(['daemon', 'status', '--json'])).stdout)
    expect(status.productVersion).toBe(JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version)
  })

  it(
    'the notes example shipped in the package installs from there, ' +
      'self-contained (its npm dependencies come with it)',
    async () => {
      const example = path.join(installed, 'examples', 'connectors', 'notes')
      const install = await run(path.join(prefix, 'bin', 'tutti'), ['connector', 'install', example, '--json'], {
        cwd: tmp,
        env: { ...shellEnv, npm_config_prefer_offline: 'true' },
      })
      expect(install.code, install.stdout + install.stderr).toBe(0)
      expect(JSON.parse(install.stdout)).toMatchObject({
        key: 'notes',
        dependencies: { count: 1 },
        state: { status: 'ready', tools: expect.any(Number) },
      })
      const notes = await run(path.join(state!, 'bin', 'tutti-connector-notes'), ['list'], { cwd: tmp, env: shellEnv })
      expect(notes).toEqual({ code: 0, stdout: 'no notes yet\n', stderr: '' })
    },
  )

  it('the command_not_found hook shipped: a typo gets the public suggestion', async () => {
    const res = await shell(['conector', 'available'])
    expect(res).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tutti: command "conector available" not found. Did you mean "tutti connector available"?\n',
    })
  })

  it('the library export resolves from the installed package', async () => {
    const consumer = path.join(tmp, 'consumer')
    fs.mkdirSync(path.join(consumer, 'node_modules'), { recursive: true })
    fs.symlinkSync(installed, path.join(consumer, 'node_modules', 'tutti'), 'dir')
    const script = "import { prepareRuntime } from 'tutti'; console.log(typeof prepareRuntime)"
    const res = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, env: shellEnv })
    expect(res).toEqual({ code: 0, stdout: 'function\n', stderr: '' })
    expect(fs.existsSync(path.join(installed, 'dist', 'index.d.ts'))).toBe(true)
  })

  it('`tutti daemon stop` leaves no daemon running', async () => {
    const res = await shell(['daemon', 'stop'])
    expect(res.code, res.stdout + res.stderr).toBe(0)
    expect(
      await eventually(
        () => daemonPids(state!),
        (pids) => pids.length === 0,
      ),
    ).toEqual([])
  })
})
