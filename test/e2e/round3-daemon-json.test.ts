import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, daemonPids, isAlive, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * A damaged daemon.json under a live daemon (round 3, item 2). The CLI
 * used to drop it and fork a second daemon, which could never take the
 * lock: every command failed DAEMON_START_FAILED and `daemon status` said
 * "not running" until someone killed the first daemon by hand. Now the
 * daemon writes it again from its own record, and the CLI, finding the
 * lock's owner alive, waits for that and proves it. Each attack runs
 * against one real detached daemon and the built CLI; a session prepared
 * before it lists its tools throughout.
 */

type Info = Record<string, unknown> & { pid: number }

/** Replaced in one rename, as a damaging writer might: the daemon never sees it half-written. */
function replace(file: string, text: string): void {
  fs.writeFileSync(`${file}.attack`, text, { mode: 0o600 })
  fs.renameSync(`${file}.attack`, file)
}

/** tools/list of another session, over and over until stopped: every answer it got. */
function keepListing(binding: Binding): { stop: () => Promise<Array<{ status: number; tools: string[] }>> } {
  const answers: Array<{ status: number; tools: string[] }> = []
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const res = await modernPost(binding, 'tools/list')
      answers.push({ status: res.status, tools: (res.json?.result?.tools ?? []).map((t: { name: string }) => t.name) })
      // paced: a bystander's load, not a flood on a 2-core machine
      await new Promise((r) => setTimeout(r, 25))
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
      return answers
    },
  }
}

describe('round 3: a damaged daemon.json never gets a second daemon forked beside the live one', () => {
  let dir: string
  let file: string
  let sleeper: ChildProcess
  let deadPid: number
  beforeAll(async () => {
    dir = tempStateDir('r3-daemon-json')
    file = path.join(dir, 'daemon.json')
    await installed(dir, faultConnector({ key: 'bystander' }))
    sleeper = spawn('sleep', ['600'], { stdio: 'ignore' })
    const gone = spawn('true', { stdio: 'ignore' })
    await new Promise((resolve) => gone.once('exit', resolve))
    deadPid = gone.pid!
  })
  afterAll(async () => {
    sleeper.kill('SIGKILL')
    await cleanupState(dir)
  })

  const naming = (info: Info, fields: Record<string, unknown>) => replace(file, JSON.stringify({ ...info, ...fields }))
  /** [attack, what daemon.log says was found, the damage]. */
  const attacks: Array<[string, (info: Info) => string, (info: Info) => void]> = [
    ['emptied', () => 'empty', () => fs.writeFileSync(file, '')],
    ['deleted', () => 'missing', () => fs.rmSync(file)],
    ['garbage JSON', () => 'not JSON', () => replace(file, '{"pid": 4, "port": ')],
    ["naming this test's own pid", () => `naming pid ${process.pid}`, (info) => naming(info, { pid: process.pid })],
    ['naming a live bystander', () => `naming pid ${sleeper.pid}`, (info) => naming(info, { pid: sleeper.pid })],
    ['naming a dead pid', () => `naming pid ${deadPid}`, (info) => naming(info, { pid: deadPid })],
    ['with a wrong control token', () => "not this daemon's", (i) => naming(i, { controlToken: 'x'.repeat(43) })],
  ]

  const title = '%s: the same daemon answers, writes it again, and `daemon stop` stops it'
  it.for(attacks)(title, async ([, found, attack]) => {
    await tuttiJson(dir, ['daemon', 'start'])
    const original = fs.readFileSync(file, 'utf8')
    const info = JSON.parse(original) as Info
    const session = (await prepared(dir, { workspace: 'w', session: 'bystander' })).mcpServers[0]!
    const listing = keepListing(session)

    attack(info)
    const available = await tuttiJson(dir, ['connector', 'available'])
    expect(available.connectors.map((c: { key: string }) => c.key)).toEqual(['bystander'])
    expect(daemonPids(dir)).toEqual([info.pid])
    // written again from the daemon's own record: the bytes it wrote at start
    expect(fs.readFileSync(file, 'utf8')).toBe(original)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)

    attack(info)
    expect(await tuttiJson(dir, ['daemon', 'status'])).toMatchObject({ running: true, pid: info.pid })
    expect(daemonPids(dir)).toEqual([info.pid])

    const answers = await listing.stop()
    expect(answers.length).toBeGreaterThan(0)
    for (const answer of answers) {
      expect(answer).toEqual({ status: 200, tools: expect.arrayContaining(['bystander_echo']) })
    }

    attack(info)
    expect(await tuttiJson(dir, ['daemon', 'stop'])).toEqual({ stopped: true, pid: info.pid })
    expect(await until(() => daemonPids(dir).length === 0)).toBe(true)
    expect(fs.existsSync(file)).toBe(false)
    expect(isAlive(sleeper.pid!)).toBe(true)
    expect(sleeper.signalCode).toBeNull()

    // this daemon's part of daemon.log: it said what it found; no rival ever started and failed on the lock
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    const ours = log.slice(log.lastIndexOf(`"msg":"daemon listening","pid":${info.pid},`))
    const rewrites = ours.split('\n').filter((l) => l.includes('"msg":"daemon.json was damaged; wrote it again"'))
    expect(rewrites.map((l) => JSON.parse(l).found)).toContain(found(info))
    expect(ours).not.toContain('another daemon holds the lock')
    expect(ours).not.toContain('daemon failed to start')
  })
})
