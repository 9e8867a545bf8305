import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConnectorInstaller } from '../../src/runtime/install/connector-installer.js'
// the built publisher takes the built logger (its class has private fields)
import { createLogger, memorySink } from '#dist/runtime/log/logger.js'
import { statePaths, type StatePaths } from '../../src/runtime/paths.js'
import { ConnectorStore } from '../../src/runtime/store/connector-store.js'
// the built publisher: a launch target imports the launcher next to the module that wrote it, so it must be dist's
import { ShimPublisher } from '#dist/runtime/shims/shim-publisher.js'
import { shimTargetPath, type ShimPin } from '#dist/runtime/shims/shim-target.js'
import { makeConnector } from '../support/connector-fixture.js'
import { tempStateDir } from '../support/tutti.js'

/**
 * Each entrypoint says which one it is, with its argv and what the launcher put in its environment; `--exit N` sets the
 * code.
 */
const cli = (name: string): { mode: number; content: string } => ({
  mode: 0o755,
  content: [
    '#!/usr/bin/env node',
    'const args = process.argv.slice(2)',
    `process.stdout.write(JSON.stringify({ entry: ${JSON.stringify(name)}, args, ` +
      `data: process.env.TUTTI_CONNECTOR_DATA ?? null, token: process.env.TUTTI_CONNECTOR_TOKEN ?? null }) + '\\n')`,
    "process.stderr.write('to stderr\\n')",
    "const i = args.indexOf('--exit')",
    'process.exit(i >= 0 ? Number(args[i + 1]) : 0)',
    '',
  ].join('\n'),
})

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Run a file as an agent's shell would: its own process, a PATH without tutti's node on it. */
function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { PATH: '/usr/bin:/bin', TUTTI_CONNECTOR_TOKEN: 'tutti_agent-session-token', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr })
      },
    )
  })
}

describe('ShimPublisher', () => {
  let dir: string
  let paths: StatePaths
  let publisher: ShimPublisher
  let lines: string[]
  let release: string
  let digest: string
  const pin = (generation: number, entry = 'one'): ShimPin => ({
    key: 'fx',
    generation,
    digest,
    entrypoint: path.join(release, 'bin', `${entry}.mjs`),
  })
  const targets = (key = 'fx'): string[] =>
    fs.existsSync(paths.shimTargetsDir(key)) ? fs.readdirSync(paths.shimTargetsDir(key)).sort() : []
  const shimOutput = async (args: string[] = []): Promise<{ entry: string; args: string[] }> => {
    const res = await run(paths.shimPath('fx'), args)
    expect(res.code, res.stderr).toBe(0)
    return JSON.parse(res.stdout)
  }

  beforeEach(async () => {
    dir = tempStateDir('shim-publisher')
    paths = statePaths(dir)
    lines = []
    publisher = new ShimPublisher(paths, createLogger(memorySink(lines)))
    const source = makeConnector(
      {
        schemaVersion: 1,
        key: 'fx',
        name: 'Fx',
        version: '1.0.0',
        auth: { kind: 'none' },
        cli: { entrypoint: 'bin/one.mjs' },
      },
      { 'bin/one.mjs': cli('one'), 'bin/two.mjs': cli('two') },
    )
    try {
      const installed = await new ConnectorInstaller(paths, new ConnectorStore(paths)).install(source, {
        env: process.env,
      })
      digest = installed.digest
    } finally {
      fs.rmSync(source, { recursive: true, force: true })
    }
    release = paths.releaseDir('fx', digest)
  })
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it(
    'publish: the shim runs the entrypoint as a real command, ' +
      'with argv, stdout, stderr and the exit code passed through',
    async () => {
      expect(await publisher.publishedGeneration('fx')).toBeUndefined()
      await publisher.publish(pin(1))
      expect(fs.statSync(paths.shimPath('fx')).mode & 0o111).not.toBe(0)
      expect(await publisher.publishedGeneration('fx')).toBe(1)
      expect(await publisher.list()).toEqual(['fx'])
      const args = ['plain', 'with space', '', 'it\'s "quoted"', 'ünïcødé ✓', '$HOME', '--exit', '7']
      const res = await run(paths.shimPath('fx'), args)
      expect(res.code).toBe(7)
      expect(res.stderr).toBe('to stderr\n')
      // the connector's data dir in, the agent's session token out
      expect(JSON.parse(res.stdout)).toEqual({ entry: 'one', args, data: paths.dataDir('fx'), token: null })
      // the launch target is private to the user, beside the state's shims
      expect(fs.statSync(shimTargetPath(paths, pin(1))).mode & 0o777).toBe(0o700)
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ level: 'info', msg: 'shim published', connector: 'fx', generation: 1 }),
      ])
      // nothing staged is left beside bin/
      expect(fs.readdirSync(dir).filter((n) => n.startsWith('.shim-staging-'))).toEqual([])
    },
  )

  it('a newer generation replaces the shim: it records the new generation and runs the new entrypoint', async () => {
    await publisher.publish(pin(1, 'one'))
    expect((await shimOutput(['a'])).entry).toBe('one')
    await publisher.publish(pin(2, 'two'))
    expect(await publisher.publishedGeneration('fx')).toBe(2)
    expect(await shimOutput(['b'])).toMatchObject({ entry: 'two', args: ['b'] })
    expect(await publisher.list()).toEqual(['fx'])
  })

  it('remove(key, generation) removes only its own generation; the launch target stays', async () => {
    expect(await publisher.remove('fx', 1)).toBe(false)
    await publisher.publish(pin(1))
    await publisher.publish(pin(2, 'two'))
    // generation 1 was replaced: its removal must not take generation 2's shim
    expect(await publisher.remove('fx', 1)).toBe(false)
    expect(await shimOutput()).toMatchObject({ entry: 'two' })
    expect(await publisher.remove('fx', 2)).toBe(true)
    expect(fs.existsSync(paths.shimPath('fx'))).toBe(false)
    expect(fs.readdirSync(paths.binDir).filter((n) => n.startsWith('tutti-connector-fx'))).toEqual([])
    expect(await publisher.publishedGeneration('fx')).toBeUndefined()
    expect(await publisher.list()).toEqual([])
    expect(targets()).toContain('g2.cjs')
    expect(await publisher.remove('fx', 2)).toBe(false)
  })

  it(
    'publishes of several connectors at once all land, ' +
      'each running its own connector, with nothing staged left behind',
    async () => {
      const keys = ['fx', 'alpha', 'beta', 'gamma', 'delta']
      await Promise.all(keys.map((key, i) => publisher.publish({ ...pin(i + 1, i % 2 ? 'two' : 'one'), key })))
      expect((await publisher.list()).sort()).toEqual([...keys].sort())
      for (const [i, key] of keys.entries()) expect(await publisher.publishedGeneration(key)).toBe(i + 1)
      // the launcher checks the key it was published for: only fx is installed, the others refuse with their own name
      expect(await shimOutput()).toMatchObject({ entry: 'one' })
      const alpha = await run(paths.shimPath('alpha'), [])
      expect(alpha).toMatchObject({ code: 126, stdout: '' })
      expect(alpha.stderr).toMatch(/^tutti-connector-alpha: the connector "alpha" is not installed/)
      expect(fs.readdirSync(dir).filter((n) => n.startsWith('.shim-staging-'))).toEqual([])
    },
  )

  it('publishing the same generation again puts back a shim deleted behind our back', async () => {
    await publisher.publish(pin(3))
    for (const name of fs.readdirSync(paths.binDir)) fs.rmSync(path.join(paths.binDir, name))
    expect(await publisher.publishedGeneration('fx')).toBeUndefined()
    await publisher.publish(pin(3))
    expect(await publisher.publishedGeneration('fx')).toBe(3)
    expect(targets()).toEqual(['g3.cjs'])
    expect(await shimOutput(['again'])).toMatchObject({ entry: 'one', args: ['again'] })
  })

  it('publishing prunes launch targets older than the previous generation; the previous one still runs', async () => {
    for (const g of [1, 2, 3, 4]) await publisher.publish(pin(g, g % 2 ? 'one' : 'two'))
    expect(targets()).toEqual(['g3.cjs', 'g4.cjs'])
    // an invocation that read the generation-3 shim just before the swap still gets its target
    const previous = await run(shimTargetPath(paths, pin(3)), ['late'])
    expect(previous.code, previous.stderr).toBe(0)
    expect(JSON.parse(previous.stdout)).toMatchObject({ entry: 'one', args: ['late'] })
    // other connectors' targets are not touched
    await publisher.publish({ ...pin(9), key: 'other' })
    expect(targets('other')).toEqual(['g9.cjs'])
    expect(targets()).toEqual(['g3.cjs', 'g4.cjs'])
  })

  it(
    'concurrent publishes of two generations of one connector: ' + 'the newest wins, and neither prunes the other',
    async () => {
      for (let g = 1; g <= 40; g += 2) {
        await Promise.all([publisher.publish(pin(g, 'one')), publisher.publish(pin(g + 1, 'two'))])
        expect(await publisher.publishedGeneration('fx')).toBe(g + 1)
      }
      expect(await shimOutput()).toMatchObject({ entry: 'two' })
      expect(targets()).toEqual(['g39.cjs', 'g40.cjs'])
      // an older publish after a newer one leaves the newer shim in place
      await publisher.publish(pin(12, 'one'))
      expect(await publisher.publishedGeneration('fx')).toBe(40)
      expect(lines.join('')).toContain('shim kept: a newer generation is published')
    },
  )

  it('list names each published connector once; removeAny takes a stray shim whatever its generation', async () => {
    await publisher.publish(pin(1))
    await publisher.publish({ ...pin(5), key: 'zeta' })
    fs.writeFileSync(path.join(paths.binDir, 'tutti'), '#!/bin/sh\n')
    fs.writeFileSync(path.join(paths.binDir, 'tutti-connector-Not_A_Key'), '')
    expect((await publisher.list()).sort()).toEqual(['fx', 'zeta'])
    await publisher.removeAny('zeta')
    expect(await publisher.list()).toEqual(['fx'])
    expect(fs.readdirSync(paths.binDir).filter((n) => n.startsWith('tutti-connector-zeta'))).toEqual([])
    await publisher.removeAny('never-published')
    expect(await shimOutput()).toMatchObject({ entry: 'one' })
  })
})
