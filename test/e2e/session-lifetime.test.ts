import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { probeAgent, probeEvents, startTutti, type ProbeEvent, type Running } from '../support/agent-probe.js'
import { killDaemonProven } from '../support/daemon-kill.js'
import { eventually, until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import {
  cleanupState,
  control,
  daemonPids,
  isAlive,
  readDaemonJson,
  snapshotTree,
  tempStateDir,
  tutti,
  tuttiJson,
} from '../support/tutti.js'

const DAY_MS = 24 * 3600 * 1000

/**
 * How session tokens end by themselves (issue 23): after their TTL (7 days
 * unless `--ttl` or TUTTI_SESSION_TTL says otherwise), or with the process
 * that owns them (`session exec`, `session bridge`).
 */
describe('session token lifetimes', () => {
  let dir: string
  let probe: ReturnType<typeof probeAgent>
  let workspace: string
  beforeAll(async () => {
    dir = tempStateDir('session-lifetime')
    probe = probeAgent()
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-lifetime-ws-'))
    await installed(dir, faultConnector({ key: 'fx' }))
  })
  afterAll(async () => {
    try {
      await cleanupState(dir)
    } finally {
      probe.cleanup()
      fs.rmSync(workspace, { recursive: true, force: true })
    }
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
    expect(lifetimeOf(recordOf('default')!)).toBe(7 * DAY_MS)
    expect(lifetimeOf(recordOf('from-env')!)).toBe(90 * 60 * 1000)
    expect(lifetimeOf(recordOf('from-flag')!)).toBe(12 * 3600 * 1000)
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
      // its directory goes in the same revoke, after the stream's close
      expect(await until(() => fs.readdirSync(path.join(dir, 'sessions')).length === sessionFiles - 1)).toBe(true)
      // the log line follows the directory's removal (SessionTokens.end): it is waited for, as the directory was
      const ended = /"msg":"session tokens ended","why":"expired","sessions":\["brief"\]/
      const log = await eventually(
        () => fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8'),
        (text) => ended.test(text),
      )
      expect(log).toMatch(ended)
    },
  )

  describe('tokens of `session exec`', () => {
    /** Execs a test leaves running (a failed one): SIGTERM, which exec passes on to the waiting probe. */
    const running: Running[] = []
    /** Agents whose exec a test killed: orphans, ended by the test that made them. */
    const orphans: number[] = []
    afterEach(async () => {
      // first the orphans: they hold their dead exec's stdio open, and its run is done when that closes
      for (const pid of orphans.splice(0)) endProbe(pid)
      for (const run of running.splice(0)) {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM')
        await run.done
      }
    })
    /** `session exec` of the probe agent, waiting; resolves once the agent has started, with its token. */
    const startExec = async (session: string, extra: string[] = []) => {
      const before = probe.events().length
      const run = startTutti(
        dir,
        ['session', 'exec', '--provider', 'codex', '--session', session, ...extra, '--', 'probe-agent'],
        {
          env: {
            PATH: `${probe.bin}${path.delimiter}${process.env.PATH}`,
            AGENT_REPORT: probe.report,
            AGENT_MODE: 'wait',
          },
          cwd: workspace,
        },
      )
      running.push(run)
      const events = await probeEvents(probe.events, (e) => starts(e).length > starts(e.slice(0, before)).length)
      const start = starts(events).at(-1)!
      return { run, agentPid: start.pid, token: start.env.TUTTI_CONNECTOR_TOKEN! }
    }
    const binding = (token: string): Binding => ({
      url: `http://127.0.0.1:${readDaemonJson(dir)!.port}/mcp/connector`,
      headers: { Authorization: `Bearer ${token}` },
    })
    /** Whether exec's watch reached the daemon: the probe agent makes no request, the watch's listen stream does. */
    const watched = async (session: string) =>
      (await control(dir, 'status')).sessionActivity.some(
        (s: { session: string; requests: number }) => s.session === session && s.requests > 0,
      )

    it('an exec token is owned by exec (pid, start time), with no expiry unless --ttl', async () => {
      const plain = await startExec('owned')
      const owner = recordOf('owned')!.owner!
      expect(owner).toMatchObject({ pid: plain.run.child.pid, start: expect.stringMatching(/^\d+$/) })
      expect(recordOf('owned')!.expiresAt).toBeUndefined()
      const timed = await startExec('owned-1h', ['--ttl', '1h'])
      const r = recordOf('owned-1h')!
      expect(r.owner!.pid).toBe(timed.run.child.pid)
      expect(lifetimeOf(r)).toBe(3600_000)
      const bad = await tutti(dir, ['session', 'exec', '--provider', 'codex', '--ttl', '1 h', '--', 'probe-agent'])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toMatch(/--ttl: "1 h" is not a duration/)
    })

    it(
      'kill -9 of the daemon under two running execs: one of them starts it again at once, one daemon, on the ' +
        'same port; both agents’ tokens work',
      async () => {
        const a = await startExec('watch-a')
        const b = await startExec('watch-b')
        expect(await until(async () => (await watched('watch-a')) && (await watched('watch-b')))).toBe(true)
        const before = readDaemonJson(dir)!
        const logBefore = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').length
        const killed = await killDaemonProven(dir)
        const t0 = Date.now()
        // no tutti command runs meanwhile: only the execs can start a daemon
        expect(await until(() => (readDaemonJson(dir)?.pid ?? killed) !== killed)).toBe(true)
        const after = readDaemonJson(dir)!
        expect(after.port).toBe(before.port)
        for (const { token } of [a, b]) expect(await status(binding(token))).toBe(200)
        // about 0.7 s on a quiet machine, kill to a daemon listening:
        // a figure to read, not a bound a slow machine fails
        console.log(`exec's watch restarted the daemon in ${Date.now() - t0} ms`)
        expect(daemonPids(dir)).toEqual([after.pid])
        const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8').slice(logBefore)
        expect(log.split('"msg":"daemon listening"').length - 1).toBe(1)
        expect(log).not.toMatch(/another daemon holds the lock/)
      },
    )

    it('`daemon stop` under a running exec: exec starts it again, and the agent’s token works', async () => {
      const a = await startExec('stopped-under')
      expect(await until(() => watched('stopped-under'))).toBe(true)
      const before = readDaemonJson(dir)!
      expect(await tuttiJson(dir, ['daemon', 'stop'])).toEqual({ stopped: true, pid: before.pid })
      expect(await until(() => (readDaemonJson(dir)?.pid ?? before.pid) !== before.pid)).toBe(true)
      expect(readDaemonJson(dir)!.port).toBe(before.port)
      expect(await status(binding(a.token))).toBe(200)
    })

    it(
      'kill -9 of `session exec` itself: the daemon proves it gone and prunes its token (the orphaned agent ' +
        'gets 401); nothing is signalled',
      async () => {
        const a = await startExec('exec-killed')
        expect(await status(binding(a.token))).toBe(200)
        expect(await until(() => watched('exec-killed'))).toBe(true)
        // exec is this test's own child: its identity needs no proof
        const exited = new Promise((resolve) => a.run.child.once('exit', resolve))
        a.run.child.kill('SIGKILL')
        await exited
        orphans.push(a.agentPid)
        // its watch's connection closed with it: that is the daemon's cue (the test's bound only limits a failure)
        expect(await until(() => recordOf('exec-killed') === undefined)).toBe(true)
        expect(await status(binding(a.token))).toBe(401)
        expect(isAlive(a.agentPid)).toBe(true)
        // the log line follows the record's removal: the daemon's log stream may not have reached the file yet
        const ended = /"msg":"session tokens ended","why":"owner gone","sessions":\["exec-killed"\]/
        expect(await until(() => ended.test(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')))).toBe(true)
      },
    )
  })
})

/**
 * A token's lifetime from its record, to the second: the daemon takes the time for the expiry a moment before the
 * token's issue time, in the same request.
 */
const lifetimeOf = (r: { issuedAt: string; expiresAt?: string }): number =>
  Math.round((Date.parse(r.expiresAt!) - Date.parse(r.issuedAt)) / 1000) * 1000

type Start = Extract<ProbeEvent, { event: 'start' }>
const starts = (events: ProbeEvent[]) => events.filter((e): e is Start => e.event === 'start')

/** The probe agent of `pid`, proven by its command line, ended with SIGTERM (it dies of it). */
function endProbe(pid: number): void {
  try {
    if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('probe-agent')) process.kill(pid, 'SIGTERM')
  } catch {
    // gone already
  }
}
