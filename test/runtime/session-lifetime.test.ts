import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger, memorySink, type Logger } from '../../src/runtime/log/logger.js'
import { processStartTicks } from '../../src/runtime/proc/pid.js'
import { SessionLifetime } from '../../src/runtime/sessions/session-lifetime.js'
import { thisOwner } from '../../src/runtime/sessions/session-owner.js'
import { hashToken, SessionTokens, type RevokedSession } from '../../src/runtime/sessions/session-tokens.js'
import { sessionStillStored } from '../../src/runtime/sessions/stored-session.js'
import { tempStateDir } from '../support/tutti.js'

const T0 = Date.parse('2026-03-01T12:00:00.000Z')
const at = (ms: number) => new Date(T0 + ms).toISOString()

describe('session lifetimes: expiry and owners', () => {
  let dir: string
  let file: string
  let lines: string[]
  let log: Logger
  /** The injected clock every instance reads. */
  let now: number
  const clock = () => now
  const lifetimes: SessionLifetime[] = []
  const open = async (): Promise<SessionTokens> => {
    const tokens = new SessionTokens(file, log, clock)
    await tokens.load()
    return tokens
  }
  const lifetime = (tokens: SessionTokens, options: ConstructorParameters<typeof SessionLifetime>[2] = {}) => {
    const l = new SessionLifetime(tokens, log, { now: clock, ...options })
    lifetimes.push(l)
    return l
  }
  const onDisk = (): string[] =>
    Object.values(JSON.parse(fs.readFileSync(file, 'utf8')).sessions as Record<string, { session: string }>)
      .map((r) => r.session)
      .sort()
  const ended = () => lines.map((l) => JSON.parse(l)).filter((r) => r.msg === 'session tokens ended')

  beforeEach(() => {
    dir = tempStateDir('session-lifetime')
    file = path.join(dir, 'sessions.json')
    lines = []
    log = createLogger(memorySink(lines))
    now = T0
  })
  afterEach(() => {
    for (const l of lifetimes.splice(0)) l.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('verify refuses a token from its expiry on, the remembered token too, before anything prunes it', async () => {
    const tokens = await open()
    const token = await tokens.issue('/ws', 'short', 'codex', { expiresAt: at(1_000) })
    const forever = await tokens.issue('/ws', 'forever', 'codex')
    expect(tokens.verify(token)).toMatchObject({ session: 'short', expiresAt: at(1_000) })
    now = T0 + 999
    // the remembered token (no hashing) and a fresh instance (hashing) agree
    expect(tokens.verify(token)).toMatchObject({ session: 'short' })
    expect((await open()).verify(token)).toMatchObject({ session: 'short' })
    now = T0 + 1_000
    expect(tokens.verify(token)).toBeUndefined()
    expect((await open()).verify(token)).toBeUndefined()
    expect(tokens.verify(forever)).toMatchObject({ session: 'forever' })
    // refused, not yet forgotten: the record goes when it is pruned
    expect(tokens.record(hashToken(token))).toBeDefined()
    now = T0 - 1
    expect(tokens.verify(token), 'a clock set back finds it again: the expiry is a time, not a flag').toBeDefined()
  })

  it('an expiry that cannot be read has passed: a damaged file never makes a token immortal', async () => {
    const tokens = await open()
    const token = await tokens.issue('/ws', 'damaged', 'codex', { expiresAt: 'next tuesday' })
    expect(tokens.verify(token)).toBeUndefined()
  })

  it(
    'at start, what expired or lost its owner while no daemon ran is pruned from sessions.json, ' +
      'as a revoke (listeners hear it); the rest stays',
    async () => {
      const first = await open()
      const gone = { pid: 1_000_001, start: '1' }
      const alive = { pid: 1_000_002, start: '2' }
      await first.issue('/ws', 'expired', 'codex', { expiresAt: at(500) })
      await first.issue('/ws', 'later', 'codex', { expiresAt: at(5_000) })
      await first.issue('/ws', 'forever', 'codex')
      await first.issue('/ws', 'owner-gone', 'bridge', { owner: gone })
      await first.issue('/ws', 'owner-alive', 'claude', { owner: alive })
      now = T0 + 1_000
      const tokens = await open()
      const heard: RevokedSession[] = []
      tokens.onRevoked((revoked) => void heard.push(...revoked))
      await lifetime(tokens, { ownerGone: (o) => o.pid === gone.pid }).start()
      expect(onDisk()).toEqual(['forever', 'later', 'owner-alive'])
      expect(heard.map((r) => r.session).sort()).toEqual(['expired', 'owner-gone'])
      expect(ended().map((r) => [r.why, r.sessions])).toEqual([
        ['expired', ['expired']],
        ['owner gone', ['owner-gone']],
      ])
    },
  )

  it('the expiry timer ends a token at its expiry, with no other event: the listen streams close then', async () => {
    // the real clock: the timer is what is tested
    const tokens = new SessionTokens(file, log)
    await tokens.load()
    const closed = new Promise<RevokedSession[]>((resolve) => tokens.onRevoked(resolve))
    const l = new SessionLifetime(tokens, log)
    lifetimes.push(l)
    await l.start()
    const issuedAt = Date.now()
    const token = await tokens.issue('/ws', 'brief', 'codex', { expiresAt: new Date(issuedAt + 150).toISOString() })
    await tokens.issue('/ws', 'stays', 'codex', { expiresAt: new Date(issuedAt + 3_600_000).toISOString() })
    expect(tokens.verify(token)).toBeDefined()
    expect((await closed).map((r) => r.session)).toEqual(['brief'])
    expect(Date.now()).toBeGreaterThanOrEqual(issuedAt + 150)
    expect(onDisk()).toEqual(['stays'])
    expect(tokens.verify(token)).toBeUndefined()
  })

  it(
    'a token whose owner process is killed is pruned once a connection closes (no signal is sent); ' +
      'an owner alive, or in another pid namespace, is kept',
    async () => {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' })
      const exited = new Promise((r) => child.once('exit', r))
      const start = await waitFor(() => processStartTicks(child.pid!))
      const me = thisOwner()!
      expect(me).toMatchObject({ pid: process.pid, start: processStartTicks(process.pid) })
      const tokens = await open()
      const owned = await tokens.issue('/ws', 'exec', 'claude', { owner: { ...me, pid: child.pid!, start } })
      await tokens.issue('/ws', 'me', 'claude', { owner: me })
      // a reused pid: this very process, but not started when the owner was
      await tokens.issue('/ws', 'reused', 'claude', { owner: { ...me, start: `${Number(me.start) - 1}` } })
      await tokens.issue('/ws', 'elsewhere', 'claude', { owner: { ...me, pid: 1_000_003, pidNamespace: 'pid:[1]' } })
      const l = lifetime(tokens)
      await l.start()
      expect(onDisk()).toEqual(['elsewhere', 'exec', 'me'])
      const pruned = new Promise<RevokedSession[]>((resolve) => tokens.onRevoked(resolve))
      child.kill('SIGKILL')
      await exited
      l.connectionClosed()
      expect((await pruned).map((r) => r.session)).toEqual(['exec'])
      expect(tokens.verify(owned)).toBeUndefined()
      expect(onDisk()).toEqual(['elsewhere', 'me'])
    },
  )

  it(
    "what exec's watch reads with no daemon to ask: a live session is stored; a revoked or expired one is not, " +
      'nor any without a file; a file it cannot read says nothing against it',
    async () => {
      const tokens = await open()
      const live = await tokens.issue('/ws', 'live', 'codex', { expiresAt: at(1_000) })
      const revoked = await tokens.issue('/ws', 'revoked', 'codex')
      await tokens.revoke({ session: 'revoked' })
      expect(await sessionStillStored(file, live, T0)).toBe(true)
      expect(await sessionStillStored(file, live, T0 + 1_000)).toBe(false)
      expect(await sessionStillStored(file, revoked, T0)).toBe(false)
      fs.writeFileSync(file, '{ not json')
      expect(await sessionStillStored(file, revoked, T0)).toBe(true)
      fs.rmSync(file)
      expect(await sessionStillStored(file, live, T0), 'no sessions.json: no session').toBe(false)
    },
  )
})

async function waitFor<T>(get: () => T | undefined): Promise<T> {
  for (;;) {
    const v = get()
    if (v !== undefined) return v
    await new Promise((r) => setTimeout(r, 10))
  }
}
