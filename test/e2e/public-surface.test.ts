import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupState, REPO, tempStateDir, tutti } from '../support/tutti.js'

describe('the public surface is `connector available` alone', () => {
  let dir: string
  beforeAll(() => {
    dir = tempStateDir('surface')
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('`tutti --help` lists no hidden command', async () => {
    const res = await tutti(dir, ['--help'])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/connector/)
    for (const hidden of ['install', 'uninstall', 'connect', 'disconnect', 'daemon', 'session', 'doctor', 'commands']) {
      expect(res.stdout).not.toMatch(new RegExp(`\\b${hidden}\\b`))
    }
    const topic = await tutti(dir, ['connector', '--help'])
    expect(topic.stdout).toMatch(/connector available/)
    expect(topic.stdout).not.toMatch(/connector (install|uninstall|connect|disconnect)/)
  })

  it('`tutti commands` lists exactly `connector available`', async () => {
    const res = await tutti(dir, ['commands', '--json'])
    expect(res.code).toBe(0)
    expect(JSON.parse(res.stdout).map((c: { id: string }) => c.id)).toEqual(['connector:available'])
  })

  it.each(['connector invoke', 'connector capabilities', 'connector skills', 'connector skill read'])(
    'retired `tutti %s` is "command not found"',
    async (command) => {
      const res = await tutti(dir, command.split(' '))
      expect(res.code).not.toBe(0)
      expect(res.stderr).toMatch(/not found/)
    },
  )

  it('no command file for a retired generic command exists', () => {
    const files = fs.readdirSync(path.join(REPO, 'src', 'commands'), { recursive: true }) as string[]
    expect(files.filter((f) => /(invoke|capabilities|skills)\.ts$|skill[\\/]/.test(f))).toEqual([])
  })

  it('oclif.manifest.json is fresh: it lists exactly the built commands, with their flags and visibility', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8'))
    const listed = Object.keys(manifest.commands).sort()
    const sources = (fs.readdirSync(path.join(REPO, 'src', 'commands'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''))
    expect(listed).toEqual(sources.map((f) => f.split(path.sep).join(':')).sort())
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'))
    expect(manifest.version).toBe(pkg.version)
    for (const file of sources) {
      const id = file.split(path.sep).join(':')
      const built = (await import(path.join(REPO, 'dist', 'commands', `${file}.js`))).default
      expect(Object.keys(manifest.commands[id].flags).sort(), id).toEqual(
        Object.keys({ ...built.baseFlags, ...built.flags, ...(built.enableJsonFlag ? { json: true } : {}) }).sort(),
      )
      expect(Boolean(manifest.commands[id].hidden), id).toBe(id !== 'connector:available')
    }
  })
})
