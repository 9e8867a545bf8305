import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isInside, RELEASE_LIMITS } from '../../src/runtime/release/release-tree.js'
import { ARCHIVE_LIMITS } from '../../src/runtime/store/unpack-archive.js'
import { baseManifest, CLI_FILE, makeConnector, skill, type FixtureFiles } from '../support/connector-fixture.js'
import { fullConnector, probeConnector } from '../support/fixture-connector.js'
import { bytesUnder, entriesUnder, peakWhile, tuttiSh, writeTgz, type TarEntry } from '../support/hostile-archives.js'
import { connected, installed, uninstalled } from '../support/in-process.js'
import { cleanupState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

// Hostile releases (issue 9, items 4, 11, 12, 13, 14): each is refused with exit 2 naming what is wrong, and leaves the
// state dir as it was.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-hostile-'))
const secretFile = path.join(scratch, 'outside', 'secret.txt')
fs.mkdirSync(path.dirname(secretFile))
fs.writeFileSync(secretFile, 'TOP SECRET\n')
/** `a -> .` repeated n times, then n `..`: lexically the release root, really n levels above the link. */
const climb = (n: number): string => `${'a/'.repeat(n)}${'../'.repeat(n)}`
const leakTarget = `../../${climb(24)}${secretFile.slice(1)}`

const manifestEntry = (key: string): TarEntry => ({
  path: 'package/tutti-connector.json',
  content: JSON.stringify(baseManifest({ key })),
})
const cliEntry: TarEntry = { path: 'package/bin/cli.js', content: 'console.log(1)\n', mode: 0o755 }

describe('hostile releases', () => {
  let stateDir: string
  const refused = async (source: string, message: RegExp, code = 'MANIFEST_INVALID'): Promise<void> => {
    const before = snapshotTree(stateDir)
    const res = await tutti(stateDir, ['connector', 'install', source, '--json'])
    expect(res.code, res.stdout + res.stderr).toBe(2)
    expect(JSON.parse(res.stdout).error).toMatchObject({ code, message: expect.stringMatching(message) })
    expect(snapshotTree(stateDir)).toEqual(before)
  }

  beforeAll(async () => {
    stateDir = tempStateDir('hostile')
    // an installed connector, so that "left as it was" covers an existing state (a small one: snapshotTree reads every
    // file)
    await installed(stateDir, probeConnector('present'))
    fs.mkdirSync(path.join(stateDir, 'tmp'), { recursive: true, mode: 0o700 })
  })
  afterAll(async () => {
    await cleanupState(stateDir)
    fs.rmSync(scratch, { recursive: true, force: true })
  })

  it(
    'a symlink whose text stays inside but whose real path is outside is refused ' + '(a -> ., a/a/../../…)',
    async () => {
      const src = makeConnector(
        baseManifest({ key: 'peek', skills: 'skills' }),
        {
          ...CLI_FILE,
          a: { symlink: '.' },
          'skills/peek/SKILL.md': skill('peek'),
          'skills/peek/leak.md': { symlink: leakTarget },
        },
        scratch,
      )
      // the lexical check says inside; the file system says otherwise
      expect(isInside(src, path.resolve(src, 'skills/peek', leakTarget))).toBe(true)
      expect(fs.readFileSync(path.join(src, 'skills/peek/leak.md'), 'utf8')).toBe('TOP SECRET\n')
      await refused(src, /symlink skills\/peek\/leak\.md -> .* resolves outside the release/)
    },
  )

  it.each([
    {
      order: 'the link first: extracted, then refused by its real path',
      first: true,
      message: /symlink leak\.md -> .* resolves outside the release/,
    },
    {
      order: 'a -> . first: node-tar refuses to extract through it',
      first: false,
      message: /package\/leak\.md: .*extract through symbolic link/,
    },
  ])('the same link inside a .tgz is refused ($order), and tmp/ is left empty', async ({ first, message }) => {
    const loop: TarEntry = { path: 'package/a', type: 'SymbolicLink', linkpath: '.' }
    const leak: TarEntry = {
      path: 'package/leak.md',
      type: 'SymbolicLink',
      linkpath: `${climb(24)}${secretFile.slice(1)}`,
    }
    await refused(
      await writeTgz(path.join(scratch, 'peek.tgz'), [
        manifestEntry('peek'),
        cliEntry,
        ...(first ? [leak, loop] : [loop, leak]),
      ]),
      message,
    )
    expect(fs.readdirSync(path.join(stateDir, 'tmp'))).toEqual([])
  })

  it.each<{ name: string; files: FixtureFiles; message: RegExp }>([
    {
      name: 'a dangling symlink',
      files: { 'docs/gone.md': { symlink: 'nowhere.md' } },
      message: /symlink docs\/gone\.md -> nowhere\.md is dangling/,
    },
    {
      name: 'a symlink loop',
      files: { x: { symlink: 'y' }, y: { symlink: 'x' } },
      message: /symlink x -> y is a symlink loop/,
    },
  ])('$name cannot be proven inside and is refused, naming it', async ({ files, message }) => {
    await refused(makeConnector(baseManifest({ key: 'loose' }), { ...CLI_FILE, ...files }, scratch), message)
  })

  it('links that really stay inside still install, from a directory and from a .tgz', async () => {
    const src = makeConnector(
      baseManifest({ key: 'linked' }),
      {
        ...CLI_FILE,
        a: { symlink: '.' },
        'lib/tool.js': 'x\n',
        'node_modules/.bin/tool': { symlink: '../../a/a/lib/tool.js' },
      },
      scratch,
    )
    const installed = await tuttiJson(stateDir, ['connector', 'install', src, '--no-wait'])
    const release = path.join(stateDir, 'connectors/linked/releases', installed.digest)
    expect(fs.readFileSync(path.join(release, 'node_modules/.bin/tool'), 'utf8')).toBe('x\n')
    const tgz = await writeTgz(path.join(scratch, 'linked.tgz'), [
      manifestEntry('linked2'),
      cliEntry,
      { path: 'package/lib/tool.js', content: 'y\n' },
      { path: 'package/node_modules/.bin/tool', type: 'SymbolicLink', linkpath: '../../lib/tool.js' },
    ])
    expect((await tuttiJson(stateDir, ['connector', 'install', tgz, '--no-wait'])).key).toBe('linked2')
    for (const key of ['linked', 'linked2']) await uninstalled(stateDir, key, { purge: true })
    expect(fs.readdirSync(path.join(stateDir, 'tmp'))).toEqual([])
  })

  it('a gzip bomb (1 GiB of zeros in one entry, ~1 MiB packed) stops at the byte cap before writing it', async () => {
    const tgz = await writeTgz(path.join(scratch, 'bomb.tgz'), [
      manifestEntry('bomb'),
      cliEntry,
      { path: 'package/zeros.bin', zeros: 1 << 30 },
    ])
    expect(fs.statSync(tgz).size).toBeLessThan(16 << 20)
    expect(ARCHIVE_LIMITS.maxBytes).toBe(RELEASE_LIMITS.maxBytes)
    const tmp = path.join(stateDir, 'tmp')
    const before = snapshotTree(stateDir)
    // a file-size limit of ~300 MiB (600 MiB for a shell counting 1 KiB blocks) keeps a regression from filling the
    // disk
    const { result, peak } = await peakWhile(
      tuttiSh(stateDir, 'ulimit -f 614400', ['connector', 'install', tgz, '--json']),
      () => bytesUnder(tmp),
    )
    expect(result.code, result.stdout + result.stderr).toBe(2)
    expect(peak).toBeLessThan(1 << 20) // the manifest and the CLI file; not a byte of zeros.bin
    expect(JSON.parse(result.stdout).error.message).toMatch(
      new RegExp(
        `archive rejected, nothing was installed: more than ${RELEASE_LIMITS.maxBytes} bytes .*package/zeros\\.bin`,
      ),
    )
    expect(fs.readdirSync(tmp)).toEqual([])
    expect(snapshotTree(stateDir)).toEqual(before)
  })

  it('an archive with too many entries stops at the entry cap', async () => {
    const many = function* (): Generator<TarEntry> {
      yield manifestEntry('many')
      for (let i = 0; i < RELEASE_LIMITS.maxFiles + 10_000; i++) yield { path: `package/f/${i}`, content: '' }
    }
    const tmp = path.join(stateDir, 'tmp')
    const before = snapshotTree(stateDir)
    const { result, peak } = await peakWhile(
      tutti(stateDir, ['connector', 'install', await writeTgz(path.join(scratch, 'many.tgz'), many()), '--json']),
      () => entriesUnder(tmp),
    )
    expect(result.code, result.stdout + result.stderr).toBe(2)
    // the entries written, plus tmp/unpack-*/, package/ and package/f/
    expect(peak).toBeLessThanOrEqual(ARCHIVE_LIMITS.maxEntries + 3)
    expect(JSON.parse(result.stdout).error.message).toMatch(
      new RegExp(`archive rejected, nothing was installed: more than ${RELEASE_LIMITS.maxFiles} files`),
    )
    expect(fs.readdirSync(tmp)).toEqual([])
    expect(snapshotTree(stateDir)).toEqual(before)
  })

  it.each([
    {
      name: 'an absolute path',
      entry: { path: '/tmp/tutti-abs-entry.txt', content: 'x' },
      message: /\/tmp\/tutti-abs-entry\.txt: absolute path/,
    },
    {
      name: 'a ".." path',
      entry: { path: 'package/../../escaped.txt', content: 'x' },
      message: /package\/\.\.\/\.\.\/escaped\.txt: path .* contains "\.\."/,
    },
    {
      name: 'an absolute symlink',
      entry: { path: 'package/l', type: 'SymbolicLink', linkpath: '/etc/passwd' },
      message: /package\/l: absolute symlink target \/etc\/passwd/,
    },
    {
      name: 'a symlink that climbs out',
      entry: { path: 'package/l', type: 'SymbolicLink', linkpath: '../../../etc/passwd' },
      message: /symlink package\/l -> \.\.\/\.\.\/\.\.\/etc\/passwd points outside/,
    },
    {
      name: 'a hard link to an absolute path',
      entry: { path: 'package/h', type: 'Link', linkpath: '/etc/passwd' },
      message: /package\/h: absolute hard link target/,
    },
    {
      name: 'a hard link out with ".."',
      entry: { path: 'package/h', type: 'Link', linkpath: '../../etc/passwd' },
      message: /package\/h: hard link target .* contains "\.\."/,
    },
    {
      name: 'a device',
      entry: { path: 'package/dev', type: 'CharacterDevice' },
      message: /package\/dev: CharacterDevice entries are not allowed/,
    },
  ])('$name in an archive is refused, naming the entry', async ({ entry, message }) => {
    await refused(
      await writeTgz(path.join(scratch, 'unsafe.tgz'), [manifestEntry('unsafe'), cliEntry, entry as TarEntry]),
      message,
    )
    expect(fs.existsSync('/tmp/tutti-abs-entry.txt')).toBe(false)
  })

  it(
    'a .tgz holding another compressed layer is refused ' + '(node-tar would unpack it out of reach of the caps)',
    async () => {
      const inner = await writeTgz(path.join(scratch, 'inner.tgz'), [manifestEntry('nested'), cliEntry])
      const outer = path.join(scratch, 'outer.tgz')
      fs.writeFileSync(outer, gzipSync(fs.readFileSync(inner)))
      await refused(outer, /archive rejected, nothing was installed: a compressed archive inside the \.tgz/)
    },
  )

  it(
    'an archive entry written through a symlink ' + '(b -> a/a/../.., then b/x) is refused before it lands outside',
    async () => {
      const entries = [
        manifestEntry('through'),
        cliEntry,
        { path: 'package/a', type: 'SymbolicLink', linkpath: '.' },
        { path: 'package/b', type: 'SymbolicLink', linkpath: 'a/a/../..' },
        { path: 'package/b/pwned.txt', content: 'x' },
      ]
      await refused(
        await writeTgz(path.join(scratch, 'through.tgz'), entries),
        /package\/b\/pwned\.txt: extracts through the symlink package\/b/,
      )
      expect(fs.existsSync(path.join(stateDir, 'tmp', 'pwned.txt'))).toBe(false)
    },
  )

  it(
    'a secret auth variable in mcp.args is refused (argv is visible in ps); ' +
      'non-secret variables and settings may be used',
    async () => {
      const mcp = (args: string[]) => ({ transport: 'stdio', command: 'node', args })
      const auth = { kind: 'env', variables: [{ name: 'API_TOKEN' }, { name: 'ACCOUNT', secret: false }] }
      const config = [{ name: 'REGION', default: 'eu' }]
      await refused(
        makeConnector(
          baseManifest({ key: 'argv', auth, config, mcp: mcp(['server.js', '--token=${API_TOKEN}']) }),
          { ...CLI_FILE, 'server.js': '' },
          scratch,
        ),
        /mcp\.args\[1\]: \$\{API_TOKEN\} is a secret auth variable .*`ps`.*mcp\.env/,
      )
      const ok = makeConnector(
        baseManifest({
          key: 'argv',
          auth,
          config,
          mcp: mcp(['server.js', '--account=${ACCOUNT}', '--region=${REGION}']),
        }),
        { ...CLI_FILE, 'server.js': '' },
        scratch,
      )
      expect((await tuttiJson(stateDir, ['connector', 'install', ok, '--no-wait'])).key).toBe('argv')
      await uninstalled(stateDir, 'argv', { purge: true })
    },
  )

  it('control characters in manifest strings are escaped in the human tables; JSON stays exact', async () => {
    const name = 'Evil\u001b[2J\u001b]0;pwned\u0007 Name'
    const description = 'ok\rOVERWRITTEN \u009b31m red \u0008'
    const version = '1.0.0\u001b[31m'
    const title = 'Title\u001b[5m'
    const src = makeConnector(
      baseManifest({ key: 'ansi', name, description, version, skills: 'skills' }),
      {
        ...CLI_FILE,
        'skills/s/SKILL.md': `---\nname: s\ndescription: "d\\a"\ntitle: "${title.replace('\u001b', '\\e')}"\n---\n`,
      },
      scratch,
    )
    await installed(stateDir, src)
    const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/
    const table = await tutti(stateDir, ['connector', 'available'])
    expect(table.code).toBe(0)
    expect(table.stdout).not.toMatch(raw)
    for (const shown of [
      'Evil\\x1b[2J\\x1b]0;pwned\\x07 Name (ansi)',
      'ok\\rOVERWRITTEN \\x9b31m red \\x08',
      'Title\\x1b[5m: d\\x07',
    ])
      expect(table.stdout).toContain(shown)
    const status = await tutti(stateDir, ['daemon', 'status'])
    expect(status.stdout).not.toMatch(raw)
    expect(status.stdout).toContain('ansi 1.0.0\\x1b[31m: ready')
    const json = await tuttiJson(stateDir, ['connector', 'available'])
    expect(json.connectors.find((c: { key: string }) => c.key === 'ansi')).toMatchObject({
      name,
      description,
      skills: [{ name: 's', title, description: 'd\u0007' }],
    })
    expect(
      (await tuttiJson(stateDir, ['daemon', 'status'])).connectors.find((c: { key: string }) => c.key === 'ansi')
        .version,
    ).toBe(version)
    await uninstalled(stateDir, 'ansi', { purge: true })
  })
})

describe('state directory permissions', () => {
  const dirs: string[] = []
  afterAll(async () => {
    for (const dir of dirs) await cleanupState(dir)
  })
  /** Octal mode of every path under root, never following a symlink (session projections link to releases). */
  const modes = (root: string, rel = '', out: Record<string, string> = {}): Record<string, string> => {
    for (const name of fs.readdirSync(path.join(root, rel))) {
      const child = rel ? `${rel}/${name}` : name
      const st = fs.lstatSync(path.join(root, child))
      if (st.isSymbolicLink()) continue
      out[child] = (st.mode & 0o7777).toString(8)
      if (st.isDirectory()) modes(root, child, out)
    }
    return out
  }

  it(
    'under umask 000 every directory is 0700 and every file 0600 or stricter ' +
      '(release copies and bin/ shims by design)',
    async () => {
      const stateDir = tempStateDir('umask')
      dirs.push(stateDir)
      const umask = (args: string[]) => tuttiSh(stateDir, 'umask 000', args)
      // MCP, CLI and a Skill, so the session projection below links one
      expect((await umask(['connector', 'install', fullConnector('umask'), '--json'])).code).toBe(0)
      expect(
        (await umask(['session', 'prepare', '--provider', 'codex', '--workspace', 'w', '--session', 's1', '--json']))
          .code,
      ).toBe(0)
      // the daemon (started under umask 000 too) is running: its singleton lock directory exists now
      expect(fs.statSync(path.join(stateDir, 'daemon.lock')).isDirectory()).toBe(true)
      const wrong: string[] = []
      for (const [rel, mode] of Object.entries(modes(stateDir))) {
        const m = parseInt(mode, 8)
        const isDir = fs.statSync(path.join(stateDir, rel)).isDirectory()
        if (/^connectors\/[^/]+\/releases\/[^/]+(\/|$)/.test(rel)) {
          if (m & 0o222 || ![0o444, 0o555].includes(m)) wrong.push(`${rel} ${mode}`) // read-only copies
        } else if (/^bin\/tutti-connector-[^/]+$/.test(rel)) {
          if (m !== 0o755) wrong.push(`${rel} ${mode}`) // cmd-shim's shims: runnable, not writable by others
        } else if (isDir ? m !== 0o700 : m & 0o077) wrong.push(`${rel} ${mode}`)
      }
      expect(wrong).toEqual([])
    },
  )

  it('an existing state dir with lax permissions is tightened at daemon start, with a warning', async () => {
    const stateDir = tempStateDir('lax')
    dirs.push(stateDir)
    await installed(stateDir, probeConnector('lax', { auth: ['LAX_TOKEN'] }))
    await connected(stateDir, 'lax', { env: { LAX_TOKEN: 's3cret-value' } })
    await tuttiJson(stateDir, ['daemon', 'stop'])
    const lax = {
      '.': 0o777,
      'credentials.json': 0o644,
      'installed.json': 0o666,
      connectors: 0o755,
      'daemon.log': 0o644,
    }
    for (const [rel, mode] of Object.entries(lax)) fs.chmodSync(path.join(stateDir, rel), mode)
    expect((await tutti(stateDir, ['daemon', 'start'])).code).toBe(0)
    const after: Record<string, string> = { ...modes(stateDir), '.': (fs.statSync(stateDir).mode & 0o777).toString(8) }
    expect(Object.fromEntries(Object.keys(lax).map((rel) => [rel, after[rel]]))).toEqual({
      '.': '700',
      'credentials.json': '600',
      'installed.json': '600',
      connectors: '700',
      'daemon.log': '600',
    })
    const warning = fs
      .readFileSync(path.join(stateDir, 'daemon.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((r) => r.level === 'warn' && /permissions/.test(r.msg))
    expect(warning?.changed).toEqual(
      expect.arrayContaining([
        { path: 'credentials.json', from: '0644', to: '0600' },
        { path: '.', from: '0777', to: '0700' },
      ]),
    )
    expect(JSON.stringify(warning)).not.toContain('s3cret-value')
  })
})
