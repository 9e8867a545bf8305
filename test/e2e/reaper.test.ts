import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { finishRun } from '../support/global-teardown.js'
import { installed } from '../support/in-process.js'
import { isDaemonCommand, reapStateDirs } from '../support/reaper.js'
import { newRunId, registerStateDir, runFile, scratchDir, statePrefix } from '../support/test-run.js'
import { cleanupState, isAlive, readDaemonJson, tempStateDir } from '../support/tutti.js'

/**
 * The run's teardown (test/support/global-teardown.ts) against real leftovers:
 * it must stop what a failed test left running, and nothing else.
 */
const decoys: ChildProcess[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const child of decoys.splice(0)) child.kill('SIGKILL')
  for (const dir of dirs.splice(0)) await cleanupState(dir)
})

/** Live members of a process group. */
function groupMembers(pgid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8')
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        return Number(fields[2]) === pgid && fields[0] !== 'Z'
      } catch {
        return false
      }
    })
    .map(Number)
}

/** A long-lived process with the given argv tail and environment, in its own group when `detached`. */
function decoy(args: string[], env: NodeJS.ProcessEnv, detached = false): number {
  const child = spawn(args[0]!, args.slice(1), { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore', detached })
  decoys.push(child)
  return child.pid!
}

describe('reaping a run', () => {
  it(
    'a leftover daemon and its upstream, ' +
      'found by the run file and by the name prefix, are stopped and their dirs removed',
    async () => {
      // a run of its own (no owner line: no other run's setup takes it for abandoned within the hour)
      const run = newRunId()
      // where that run's workers make their state dirs: its scratch dir (their TMPDIR)
      fs.mkdirSync(scratchDir(run))
      const named = fs.mkdtempSync(path.join(scratchDir(run), `${statePrefix(run)}named-`))
      const fixture = fs.mkdtempSync(path.join(scratchDir(run), 'tutti-fixture-'))
      const listed = tempStateDir('listed')
      registerStateDir(listed, run)
      const [a, b] = await Promise.all([named, listed].map((dir) => installed(dir, faultConnector({ key: 'fx' }))))
      const daemons = [named, listed].map((dir) => readDaemonJson(dir)!.pid)
      const upstreams = [a.state.pid, b.state.pid]
      for (const pid of [...daemons, ...upstreams]) expect(isAlive(pid)).toBe(true)

      const reaped = finishRun(run, { quiet: true })
      expect(reaped.daemons.sort()).toEqual([...daemons].sort())
      for (const pid of [...daemons, ...upstreams]) expect(isAlive(pid), `pid ${pid}`).toBe(false)
      expect(fs.existsSync(named) || fs.existsSync(listed) || fs.existsSync(runFile(run))).toBe(false)
      // and what else the run made in its TMPDIR goes with it
      expect(fs.existsSync(fixture) || fs.existsSync(scratchDir(run))).toBe(false)
    },
  )

  it('what a killed daemon left in its recorded upstream groups is killed by its marker', async () => {
    const dir = tempStateDir('reap-groups')
    dirs.push(dir)
    const res = await installed(
      dir,
      faultConnector({ key: 'stubborn', env: { FIXTURE_STUBBORN: '1', FIXTURE_GRANDCHILD: '1' } }),
    )
    const server = res.state.pid as number
    const [grandchild] = await eventually(
      () => groupMembers(server).filter((p) => p !== server),
      (m) => m.length === 1,
    )
    process.kill(readDaemonJson(dir)!.pid, 'SIGKILL')
    // the server dies with the daemon (parent-death signal); the grandchild is what is left
    expect(
      await eventually(
        () => isAlive(server),
        (alive) => !alive,
      ),
    ).toBe(false)
    expect(isAlive(grandchild!)).toBe(true)
    expect(reapStateDirs([dir]).upstreams).toEqual([grandchild])
    expect(
      await eventually(
        () => isAlive(grandchild!),
        (alive) => !alive,
      ),
    ).toBe(false)
  })

  it('never signals a process that does not prove itself, whatever the state files name', () => {
    const dir = tempStateDir('reap-decoys')
    const other = tempStateDir('reap-other')
    dirs.push(dir, other)
    const marker = 'm'.repeat(32)
    // the state dir in its environment, but not a daemon's command line
    const sleeper = decoy(['sleep', '600'], { TUTTI_STATE_DIR: dir }, true)
    // a daemon's command line, but another state dir's
    const foreign = decoy([process.execPath, '-e', 'setInterval(() => {}, 1000)', '/x/dist/runtime/daemon/main.js'], {
      TUTTI_STATE_DIR: other,
    })
    // the marker, but in a group nobody recorded
    const marked = decoy(['sleep', '600'], { TUTTI_UPSTREAM_OF: marker })
    fs.writeFileSync(path.join(dir, 'daemon.json'), JSON.stringify({ pid: sleeper, port: 9 }))
    fs.writeFileSync(path.join(dir, 'daemon.pid'), `${foreign}\n`)
    fs.mkdirSync(path.join(dir, 'upstreams'))
    // a recorded group (the sleeper's) whose member lacks the marker
    fs.writeFileSync(path.join(dir, 'upstreams', `${sleeper}.json`), JSON.stringify({ pgid: sleeper, marker }))
    expect(reapStateDirs([dir], { graceMs: 100 })).toEqual({ daemons: [], upstreams: [] })
    for (const pid of [sleeper, foreign, marked]) expect(isAlive(pid), `pid ${pid}`).toBe(true)
  })

  it('a daemon is named by its entry file or by `daemon run`, nothing else', () => {
    expect(isDaemonCommand(['/usr/bin/node', '/repo/dist/runtime/daemon/main.js'])).toBe(true)
    expect(isDaemonCommand(['/usr/bin/node', '/repo/bin/run.js', 'daemon', 'run'])).toBe(true)
    for (const argv of [
      ['/usr/bin/node', '/repo/bin/run.js', 'daemon', 'start'],
      ['sleep', '600'],
      ['daemon', 'run'],
      ['/usr/bin/node', '/repo/daemon/main.js.bak'],
    ])
      expect(isDaemonCommand(argv), argv.join(' ')).toBe(false)
  })
})
