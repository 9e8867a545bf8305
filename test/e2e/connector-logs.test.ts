import fs from 'node:fs'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { modernClient } from '../support/mcp-clients.js'
import { cleanupState, snapshotTree, spawnTutti, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const FIRST_KEY = 'svc-first-9c41d7e2b0a5'
const SECOND_KEY = 'svc-second-5e8a1f37c2d9'

interface LogRecord {
  time: string
  source: 'stderr' | 'tutti'
  msg: string
  [field: string]: unknown
}

describe('tutti connector logs', () => {
  let dir: string
  let client: Client
  const logFile = () => path.join(dir, 'connectors', 'chatty', 'connector.log')
  const records = async (key = 'chatty', lines = '1000'): Promise<LogRecord[]> =>
    (await tuttiJson(dir, ['connector', 'logs', key, '--lines', lines])).lines
  const said = async (text: string) => (await records()).some((r) => r.msg.includes(text))

  beforeAll(async () => {
    dir = tempStateDir('connector-logs')
    // a server that writes its key and each echo to stderr; eager, so it starts at install
    const env = { FIXTURE_STDERR: 'SERVICE_TOKEN' }
    const release = faultConnector({ key: 'chatty', auth: ['SERVICE_TOKEN'], env, activation: 'eager' })
    const keys = [{ name: 'SERVICE_TOKEN', value: FIRST_KEY, secret: false, flag: '--from-env' }]
    await installed(dir, release, { keys })
    client = await modernClient((await prepared(dir, { workspace: 'w', session: 'logs' })).mcpServers[0]!)
  })
  afterAll(async () => {
    await client?.close()
    await cleanupState(dir)
  })

  it("shows the server's stderr and tutti's events, each with a time and its source, the key redacted", async () => {
    const lines = await records()
    const stderr = lines.filter((r) => r.source === 'stderr').map((r) => r.msg)
    expect(stderr).toContain('starting with key [redacted]')
    const events = lines.filter((r) => r.source === 'tutti').map((r) => r.msg)
    expect(events).toEqual(expect.arrayContaining(['starting release 1.0.0', 'upstream started', 'route committed']))
    for (const r of lines) expect(Number.isNaN(Date.parse(r.time))).toBe(false)
    const human = await tutti(dir, ['connector', 'logs', 'chatty'])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^\S+Z stderr starting with key \[redacted\]$/m)
    expect(human.stdout).toMatch(/^\S+Z tutti {2}upstream started \(pid: \d+, tools: \d+\)$/m)
    const daemonLog = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    for (const text of [human.stdout, fs.readFileSync(logFile(), 'utf8'), daemonLog]) {
      expect(text).not.toContain(FIRST_KEY)
    }
  })

  it('--lines N shows the last N lines; a bad N or an unknown connector is refused and changes nothing', async () => {
    const all = await records()
    expect(await records('chatty', '2')).toEqual(all.slice(-2))
    const before = snapshotTree(dir)
    for (const bad of ['0', '-3', 'ten', '1.5']) {
      const res = await tutti(dir, ['connector', 'logs', 'chatty', '--lines', bad, '--json'])
      expect(res.code).toBe(2)
      const message = `--lines takes a positive integer, not "${bad}"`
      expect(JSON.parse(res.stdout).error).toEqual({ code: 'ARGUMENT_INVALID', message })
    }
    const missing = await tutti(dir, ['connector', 'logs', 'nowhere'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('connector "nowhere" is not installed')
    expect(snapshotTree(dir)).toEqual(before)
  })

  it('--follow prints a new line as the server writes it, and ends cleanly on Ctrl-C', async () => {
    const follow = spawnTutti(dir, ['connector', 'logs', 'chatty', '--follow', '--lines', '5'])
    let out = ''
    let err = ''
    follow.stdout.on('data', (d) => (out += d))
    follow.stderr.on('data', (d) => (err += d))
    type Exit = { code: number | null; signal: NodeJS.Signals | null }
    const exited = new Promise<Exit>((resolve) => follow.on('exit', (code, signal) => resolve({ code, signal })))
    // the last lines come first: the follow is reading
    await until(() => out.includes('route committed'))
    await client.callTool({ name: 'chatty_echo', arguments: { message: 'follow-marker-1' } })
    await until(() => out.includes('stderr echo asked: follow-marker-1'))
    follow.kill('SIGINT')
    expect(await exited).toEqual({ code: 0, signal: null })
    expect(err).toBe('')
  })

  it('a follow whose reader went away (a closed pipe, `| head`) ends at its next line', async () => {
    const follow = spawnTutti(dir, ['connector', 'logs', 'chatty', '--follow', '--lines', '1'])
    const exited = new Promise<number | null>((resolve) => follow.on('exit', (code) => resolve(code)))
    await new Promise((resolve) => follow.stdout.once('data', resolve))
    follow.stdout.destroy()
    await client.callTool({ name: 'chatty_echo', arguments: { message: 'nobody reads this' } })
    expect(await exited).toBe(0)
  })

  it('tells a crash with its reason, the restart, and a change of credentials, never printing a key', async () => {
    await client.callTool({ name: 'chatty_crash', arguments: {} }).catch(() => undefined)
    await until(async () => (await records()).filter((r) => r.msg === 'upstream started').length >= 2)
    const exit = (await records()).find((r) => r.msg === 'upstream exited; restarting with backoff')
    const reason = expect.stringMatching(/^upstream exited with code 3/)
    expect(exit).toMatchObject({ source: 'tutti', level: 'warn', reason })
    await connected(dir, 'chatty', { env: { SERVICE_TOKEN: SECOND_KEY } })
    await until(() => said('credentials or settings changed: starting it'))
    const text = JSON.stringify(await records()) + fs.readFileSync(logFile(), 'utf8')
    for (const key of [FIRST_KEY, SECOND_KEY]) expect(text).not.toContain(key)
  })
})
