import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TuttiError } from '../../src/runtime/errors.js'
import { ConnectorInstaller } from '../../src/runtime/install/connector-installer.js'
import { statePaths } from '../../src/runtime/paths.js'
import { ConnectorStore } from '../../src/runtime/store/connector-store.js'
import { baseManifest, CLI_FILE, makeConnector, skill } from '../support/connector-fixture.js'
import { probeConnector } from '../support/fixture-connector.js'
import { snapshotTree } from '../support/tutti.js'

/**
 * Every bad manifest is an input error (exit 2) naming the offending field,
 * and leaves the state directory as it was. These run the installer the CLI
 * runs, in-process; test/e2e/bad-manifests.test.ts proves through the built
 * CLI that such an error comes out as exit 2 with the message, in both modes.
 */
const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-outside-'))
fs.writeFileSync(path.join(outside, 'secret.txt'), 'not yours')
fs.mkdirSync(path.join(outside, 'skill'))
fs.writeFileSync(path.join(outside, 'skill', 'SKILL.md'), skill('stolen'))

const cases: Array<{ name: string; dir: () => string; field: RegExp }> = [
  {
    name: 'missing key',
    dir: () => makeConnector({ ...baseManifest(), key: undefined }, CLI_FILE),
    field: /key: .*expected string/,
  },
  {
    name: 'bad key pattern (underscore)',
    dir: () => makeConnector(baseManifest({ key: 'my_conn' }), CLI_FILE),
    field: /key: must match/,
  },
  {
    name: 'bad key pattern (too long)',
    dir: () => makeConnector(baseManifest({ key: 'a'.repeat(25) }), CLI_FILE),
    field: /key: must match/,
  },
  {
    name: 'unknown top-level field',
    dir: () => makeConnector(baseManifest({ homepage: 'x' }), CLI_FILE),
    field: /homepage: unknown field/,
  },
  {
    name: 'unknown nested field',
    dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', timeout: 3 } }), CLI_FILE),
    field: /mcp\.timeout: unknown field/,
  },
  {
    name: 'a result cap under 4 KiB',
    dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', maxResultBytes: 100 } })),
    field: /mcp\.maxResultBytes: must be at least 4096/,
  },
  {
    name: 'a result cap over 16 MiB',
    dir: () =>
      makeConnector(baseManifest({ mcp: { transport: 'http', url: 'https://x.test/mcp', maxResultBytes: 2 ** 25 } })),
    field: /mcp\.maxResultBytes: must be at most 16777216 \(16 MiB\)/,
  },
  {
    name: 'a result cap that is not a whole number',
    dir: () => makeConnector(baseManifest({ mcp: { transport: 'stdio', command: 'node', maxResultBytes: 5000.5 } })),
    field: /mcp\.maxResultBytes: must be a whole number of bytes/,
  },
  {
    name: 'path escaping with ..',
    dir: () => makeConnector(baseManifest({ cli: { entrypoint: '../outside.js' } })),
    field: /cli\.entrypoint: must stay inside the release/,
  },
  {
    name: 'absolute path',
    dir: () => makeConnector(baseManifest({ cli: { entrypoint: '/bin/sh' } })),
    field: /cli\.entrypoint: must be a relative path/,
  },
  {
    name: 'symlink escape (entrypoint)',
    dir: () =>
      makeConnector(baseManifest({ cli: { entrypoint: 'bin/cli.js' } }), {
        'bin/cli.js': { symlink: path.join(outside, 'secret.txt') },
      }),
    field: /symlink .*bin\/cli\.js.* points outside the release/,
  },
  {
    name: 'symlink escape (skills dir)',
    dir: () => makeConnector(baseManifest({ skills: 'skills' }), { ...CLI_FILE, skills: { symlink: outside } }),
    field: /skills.*(outside|symlink)/,
  },
  {
    name: 'lazy without tools',
    dir: () =>
      makeConnector(
        baseManifest({ mcp: { transport: 'stdio', command: 'node', args: ['s.js'], activation: 'lazy' } }),
        { ...CLI_FILE, 's.js': '' },
      ),
    field: /mcp\.tools: lazy activation requires/,
  },
  {
    name: 'bad skill front matter (no description)',
    dir: () =>
      makeConnector(baseManifest({ skills: 'skills' }), {
        ...CLI_FILE,
        'skills/a/SKILL.md': '---\nname: a\n---\nbody\n',
      }),
    field: /skills\/a\/SKILL\.md: description: .*expected string/,
  },
  {
    name: 'skill without front matter',
    dir: () =>
      makeConnector(baseManifest({ skills: 'skills' }), { ...CLI_FILE, 'skills/a/SKILL.md': '# no front matter\n' }),
    field: /skills\/a\/SKILL\.md: missing YAML front matter/,
  },
  {
    name: 'duplicate skill names',
    dir: () =>
      makeConnector(baseManifest({ skills: 'skills' }), {
        ...CLI_FILE,
        'skills/a/SKILL.md': skill('same'),
        'skills/b/SKILL.md': skill('same'),
      }),
    field: /skills\/b\/SKILL\.md: duplicate skill name "same"/,
  },
  {
    name: 'undeclared ${VAR}',
    dir: () =>
      makeConnector(
        baseManifest({
          mcp: { transport: 'http', url: 'https://example.invalid/mcp', headers: { Authorization: 'Bearer ${HOME}' } },
        }),
        CLI_FILE,
      ),
    field: /mcp\.headers\.Authorization: \$\{HOME\} is not a declared auth variable/,
  },
  {
    name: 'wrong schemaVersion',
    dir: () => makeConnector(baseManifest({ schemaVersion: 2 }), CLI_FILE),
    field: /schemaVersion: must be 1/,
  },
  { name: 'invalid JSON', dir: () => makeConnector('{ "schemaVersion": 1, ', CLI_FILE), field: /not valid JSON/ },
  {
    name: 'tool schema root not an object',
    dir: () =>
      makeConnector(
        baseManifest({
          mcp: { transport: 'stdio', command: 'node', tools: [{ name: 't', inputSchema: { type: 'array' } }] },
        }),
        CLI_FILE,
      ),
    field: /mcp\.tools\[0\]\.inputSchema\.type: the root of an inputSchema must be type "object"/,
  },
  {
    name: 'entrypoint missing',
    dir: () => makeConnector(baseManifest({ cli: { entrypoint: 'bin/nope.js' } })),
    field: /cli\.entrypoint: "bin\/nope\.js" does not exist/,
  },
  {
    name: 'mcp arg escaping',
    dir: () =>
      makeConnector(
        baseManifest({ mcp: { transport: 'stdio', command: 'node', args: ['../../etc/passwd'] } }),
        CLI_FILE,
      ),
    field: /mcp\.args\[0\]: .*escapes the release/,
  },
]

describe('bad manifests', () => {
  let stateDir: string
  let installer: ConnectorInstaller
  let before: Record<string, string>

  beforeAll(async () => {
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-unit-bad-'))
    installer = new ConnectorInstaller(statePaths(stateDir), new ConnectorStore(statePaths(stateDir)))
    // a connector already installed, so "nothing changed" covers an existing state too
    await installer.install(probeConnector('present'), { env: process.env })
    before = snapshotTree(stateDir)
  })
  afterAll(() => {
    for (const dir of [stateDir, outside]) fs.rmSync(dir, { recursive: true, force: true })
  })

  it.each(cases)('$name → an input error (exit 2) naming the field, nothing changed', async ({ dir, field }) => {
    const src = dir()
    const err = await installer.install(src, { env: process.env }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(TuttiError)
    expect(err).toMatchObject({ code: 'MANIFEST_INVALID', exitCode: 2, message: expect.stringMatching(field) })
    expect(snapshotTree(stateDir)).toEqual(before)
    fs.rmSync(src, { recursive: true, force: true })
  })

  it('a directory without a manifest → MANIFEST_NOT_FOUND, exit 2, nothing changed', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-empty-'))
    await expect(installer.install(empty, { env: process.env })).rejects.toMatchObject({
      code: 'MANIFEST_NOT_FOUND',
      exitCode: 2,
    })
    expect(snapshotTree(stateDir)).toEqual(before)
  })

  it('a path that does not exist says so, and a file that is not a directory says that, nothing changed', async () => {
    const missing = path.join(os.tmpdir(), `tutti-missing-${process.pid}-${Date.now()}`)
    await expect(installer.install(missing, { env: process.env })).rejects.toMatchObject({
      code: 'MANIFEST_NOT_FOUND',
      exitCode: 2,
      message: `${missing} does not exist`,
    })
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-file-')), 'plain.txt')
    fs.writeFileSync(file, 'not a connector')
    await expect(installer.install(file, { env: process.env })).rejects.toMatchObject({
      code: 'MANIFEST_NOT_FOUND',
      exitCode: 2,
      message: `${file} is not a directory (a connector is a directory, or a .tgz of one)`,
    })
    expect(snapshotTree(stateDir)).toEqual(before)
  })
})
