import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const DAY_MS = 24 * 3600 * 1000

/**
 * How session tokens end by themselves (issue 23): after their TTL (7 days
 * unless `--ttl` or TUTTI_SESSION_TTL says otherwise), or with the process
 * that owns them (`session exec`, `session bridge`).
 */
describe('session token lifetimes', () => {
  let dir: string
  beforeAll(async () => {
    dir = tempStateDir('session-lifetime')
    await installed(dir, faultConnector({ key: 'fx' }))
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  const records = () =>
    JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).sessions as Record<
      string,
      { session: string; issuedAt: string; expiresAt?: string; owner?: { pid: number; start: string } }
    >
  const recordOf = (session: string) => Object.values(records()).find((r) => r.session === session)
  const prepare = (session: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) =>
    tuttiJson(
      dir,
      ['session', 'prepare', '--provider', 'tutti-agent', '--workspace', 'ws', '--session', session, ...extra],
      { env },
    )
  const status = async (binding: Binding) => (await modernPost(binding, 'tools/list')).status

  it('a bad --ttl or TUTTI_SESSION_TTL exits 2 naming it, and changes nothing on disk', async () => {
    await prepare('warm-up')
    const before = snapshotTree(dir)
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [['--ttl', '90'], {}, /--ttl: "90" is not a duration; give a whole number and one unit/],
      [['--ttl', '1.5h'], {}, /--ttl: "1\.5h" is not a duration/],
      [['--ttl', '0m'], {}, /--ttl: "0m" is not a duration/],
      [['--ttl', '4000d'], {}, /--ttl: 4000d is longer than a session may live \(3650d\)/],
      [[], { TUTTI_SESSION_TTL: 'a week' }, /TUTTI_SESSION_TTL: "a week" is not a duration/],
      [['--ttl', '1h'], { TUTTI_SESSION_TTL: '7 d' }, /TUTTI_SESSION_TTL: "7 d" is not a duration/],
    ]
    for (const [flags, env, message] of cases) {
      const res = await tutti(
        dir,
        ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'bad', ...flags, '--json'],
        { env },
      )
      expect(res.code, flags.join(' ')).toBe(2)
      expect(JSON.parse(res.stdout).error.message, flags.join(' ')).toMatch(message)
    }
    expect(snapshotTree(dir)).toEqual(before)
  })

  it('a prepared token expires after 7 days by default, after TUTTI_SESSION_TTL, or after its --ttl', async () => {
    await prepare('default')
    await prepare('from-env', [], { TUTTI_SESSION_TTL: '90m' })
    await prepare('from-flag', ['--ttl', '12h'], { TUTTI_SESSION_TTL: '90m' })
    const lifetime = (session: string) => {
      const r = recordOf(session)!
      return Date.parse(r.expiresAt!) - Date.parse(r.issuedAt)
    }
    expect(lifetime('default')).toBe(7 * DAY_MS)
    expect(lifetime('from-env')).toBe(90 * 60 * 1000)
    expect(lifetime('from-flag')).toBe(12 * 3600 * 1000)
  })

  it(
    'at its expiry the token is ended by the daemon on its own: its listen stream closes, then it gets 401, ' +
      'and sessions.json and the session files no longer have it',
    async () => {
      const p = await prepare('brief', ['--ttl', '3s'])
      const binding = p.mcpServers[0] as Binding
      expect(await status(binding)).toBe(200)
      const expiresAt = Date.parse(recordOf('brief')!.expiresAt!)
      const sessionFiles = fs.readdirSync(path.join(dir, 'sessions')).length
      const client = await modernClient(binding)
      const sub = await client.listen({ toolsListChanged: true })
      // the stream's end is the expiry's event: the test's timeout bounds the wait
      await sub.closed
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt)
      await client.close().catch(() => {})
      expect(await status(binding)).toBe(401)
      expect(recordOf('brief')).toBeUndefined()
      expect(fs.readdirSync(path.join(dir, 'sessions')).length).toBe(sessionFiles - 1)
      const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      expect(log).toMatch(/"msg":"session tokens ended","why":"expired","sessions":\["brief"\]/)
    },
  )
})
