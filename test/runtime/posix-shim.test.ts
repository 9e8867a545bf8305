import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConnectorInstaller } from '../../src/runtime/install/connector-installer.js'
// the built publisher takes the built logger (its class has private fields)
import { createLogger, memorySink } from '#dist/runtime/log/logger.js'
import { statePaths, type StatePaths } from '../../src/runtime/paths.js'
import { ConnectorStore } from '../../src/runtime/store/connector-store.js'
// the built publisher: a launch target requires the launcher next to the module that wrote it, so it must be dist's
import { posixShimSource, shebangCanName, shellQuote } from '#dist/runtime/shims/posix-shim.js'
import { ShimPublisher } from '#dist/runtime/shims/shim-publisher.js'
import { shimGeneration, shimTargetPath } from '#dist/runtime/shims/shim-target.js'
import { makeConnector } from '../support/connector-fixture.js'
import { REPO } from '../support/tutti.js'

// a directory name a shell would split, expand, glob, substitute or end a quote at (no backslash:
// node itself refuses to run an ES module from such a path, ERR_INVALID_MODULE_SPECIFIER)
const NASTY = `tutti shim 'single' "double" $HOME \`id\` $(id) ; & | < > * ? [a] ✓\nsecond line shims/x/g999.cjs'`

describe('posixShimSource and shimGeneration', () => {
  it(
    'quotes any path as one word, and reads back the generation of the target, ' + 'not of a path that looks like one',
    () => {
      const node = `/opt/${NASTY}/node`
      const target = `/state/${NASTY}/shims/fx/g7.cjs`
      const text = posixShimSource('tutti-connector-fx', 7, node, target)
      expect(text.split('\n')[0]).toBe('#!/bin/sh')
      expect(text).toContain(`exec ${shellQuote(node)} ${shellQuote(target)} "$@"\n`)
      expect(shimGeneration(text)).toBe(7)
    },
  )

  it('reads the generation from the scripts cmd-shim wrote before (an .mjs target, relative to the shim)', () => {
    const legacy =
      '#!/bin/sh\nbasedir=$(dirname "$(echo "$0" | sed -e \'s,\\\\,/,g\')")\n\n' +
      'if [ -x "$basedir//usr/bin/node" ]; then\n' +
      '  exec "$basedir//usr/bin/node"  "$basedir/../shims/notes/g12.mjs" "$@"\n' +
      'else \n  exec /usr/bin/node  "$basedir/../shims/notes/g12.mjs" "$@"\n' +
      'fi\n'
    expect(shimGeneration(legacy)).toBe(12)
    expect(shimGeneration('#!/bin/sh\nexec something else\n')).toBeUndefined()
  })
})

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** The shim as an agent's shell would start it, with an empty PATH: nothing in it may be looked up. */
function run(file: string, args: string[], input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { env: { PATH: '', TUTTI_CONNECTOR_TOKEN: 'tutti_agent-session-token' } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr })
      },
    )
    child.stdin!.end(input)
  })
}

describe('a shim in a state dir whose path holds spaces, quotes, $, backquotes, globs and a newline', () => {
  let root: string
  let paths: StatePaths
  let publisher: ShimPublisher
  let digest: string

  beforeAll(async () => {
    root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-posix-shim-')), NASTY)
    paths = statePaths(root)
    publisher = new ShimPublisher(paths, createLogger(memorySink([])))
    const probe = fs.readFileSync(path.join(REPO, 'test/fixtures/probe-cli.mjs'), 'utf8')
    const source = makeConnector(
      {
        schemaVersion: 1,
        key: 'fx',
        name: 'Fx',
        version: '1.0.0',
        auth: { kind: 'none' },
        cli: { entrypoint: 'bin/probe.mjs' },
      },
      {
        'bin/probe.mjs': { mode: 0o755, content: probe },
        // the same probe as a CommonJS script: the launcher runs either kind as the main module
        'bin/probe.cjs': {
          mode: 0o755,
          content:
            `#!/usr/bin/env node\nrequire.main === module || process.exit(99)\n` +
            `import(${JSON.stringify(path.join(REPO, 'test/fixtures/probe-cli.mjs'))})\n`,
        },
      },
    )
    try {
      digest = (await new ConnectorInstaller(paths, new ConnectorStore(paths)).install(source, { env: process.env }))
        .digest
    } finally {
      fs.rmSync(source, { recursive: true, force: true })
    }
  })
  afterAll(() => {
    fs.rmSync(path.dirname(root), { recursive: true, force: true })
  })

  const pin = (generation: number, entry: string) => ({
    key: 'fx',
    generation,
    digest,
    entrypoint: path.join(paths.releaseDir('fx', digest), 'bin', entry),
  })

  it(
    'the POSIX shim is a symlink to the launch target, whose #! line names node: no shell; ' +
      'the .cmd and .ps1 are still written',
    async () => {
      await publisher.publish(pin(3, 'probe.mjs'))
      const target = shimTargetPath(paths, pin(3, 'probe.mjs'))
      expect(fs.lstatSync(paths.shimPath('fx')).isSymbolicLink()).toBe(true)
      expect(fs.readlinkSync(paths.shimPath('fx'))).toBe(target)
      expect(fs.readFileSync(target, 'utf8').split('\n')[0]).toBe(`#!${process.execPath}`)
      expect(await publisher.publishedGeneration('fx')).toBe(3)
      for (const suffix of ['.cmd', '.ps1'])
        expect(fs.readFileSync(paths.shimPath('fx') + suffix, 'utf8')).toMatch(/shims[\\/]fx[\\/]g3\.cjs/)
    },
  )

  it(
    'where no #! line can name node (a path with a space), the POSIX shim is one exec of node and the target by ' +
      'absolute path, and it runs',
    async () => {
      const spaced = path.join(path.dirname(root), 'node with space', 'node')
      fs.mkdirSync(path.dirname(spaced), { recursive: true })
      fs.symlinkSync(process.execPath, spaced)
      const viaShell = new ShimPublisher(paths, createLogger(memorySink([])), spaced)
      await viaShell.publish(pin(6, 'probe.mjs'))
      const target = shimTargetPath(paths, pin(6, 'probe.mjs'))
      expect(fs.lstatSync(paths.shimPath('fx')).isSymbolicLink()).toBe(false)
      expect(fs.readFileSync(paths.shimPath('fx'), 'utf8')).toBe(
        [
          '#!/bin/sh',
          '# tutti-connector-fx, generation 6: written by the tutti daemon, do not edit',
          `exec ${shellQuote(spaced)} ${shellQuote(target)} "$@"`,
          '',
        ].join('\n'),
      )
      expect(await viaShell.publishedGeneration('fx')).toBe(6)
      const res = await run(paths.shimPath('fx'), ['a b', '--exit', '4'])
      expect(res.code).toBe(4)
      expect(JSON.parse(res.stdout).argv).toEqual(['a b', '--exit', '4'])
      // and back to a symlink with a node a #! line can name
      await publisher.publish(pin(7, 'probe.mjs'))
      expect(fs.readlinkSync(paths.shimPath('fx'))).toBe(shimTargetPath(paths, pin(7, 'probe.mjs')))
    },
  )

  it('shebangCanName: one absolute word the kernel reads whole, never on Windows', () => {
    expect(shebangCanName('/usr/bin/node', 'linux')).toBe(true)
    expect(shebangCanName('/opt/my node/bin/node', 'linux')).toBe(false)
    expect(shebangCanName('node', 'linux')).toBe(false)
    expect(shebangCanName(`/${'x'.repeat(125)}`, 'linux')).toBe(false)
    expect(shebangCanName('/usr/bin/node', 'win32')).toBe(false)
  })

  it.each(['probe.mjs', 'probe.cjs'])(
    'runs %s with an empty PATH: argv, stdout, stderr, ' +
      'the exit code and the data dir pass through, the session token does not',
    async (entry) => {
      await publisher.publish(pin(4, entry))
      const argv = ['with space', "it's", '"dq"', '$HOME', '`id`', '*', '', 'ünï ✓', '--exit', '9']
      const res = await run(paths.shimPath('fx'), argv)
      expect(res.stderr).toBe('to stderr\n')
      expect(res.code).toBe(9)
      const out = JSON.parse(res.stdout)
      expect(out.argv).toEqual(argv)
      expect(out.env.TUTTI_CONNECTOR_DATA).toBe(paths.dataDir('fx'))
      expect(out.env.TUTTI_CONNECTOR_TOKEN).toBeUndefined()
      expect(out.execPath).toBe(process.execPath)
    },
  )

  it('stdin passes through, and a signal reaches the connector process itself', async () => {
    await publisher.publish(pin(5, 'probe.mjs'))
    const input = 'line one\nline two ✓\n'.repeat(500)
    expect(await run(paths.shimPath('fx'), ['--stdin', '--exit', '3'], input)).toEqual({
      code: 3,
      stdout: input,
      stderr: 'stdin done\n',
    })
    const child = spawn(paths.shimPath('fx'), ['--wait', '60000'], {
      env: { PATH: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    // the process the shell started is the connector's (exec), so the signal is its own
    expect(out).toMatch(new RegExp(`^ready ${child.pid} `))
    child.kill('SIGTERM')
    expect(await new Promise((resolve) => child.on('exit', (code) => resolve(code)))).toBe(143)
    expect(out).toContain('got SIGTERM')
  })
})
