import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger, memorySink, type Logger } from '../../src/runtime/log/logger.js'
import { hashToken, SessionTokens, type RevokedSession } from '../../src/runtime/sessions/session-tokens.js'
import { tempStateDir } from '../support/tutti.js'

describe('SessionTokens', () => {
  let dir: string
  let file: string
  let lines: string[]
  let log: Logger
  /** A fresh instance on the file, loaded: what a restarted daemon sees. */
  const reopen = async (): Promise<SessionTokens> => {
    const tokens = new SessionTokens(file, log)
    await tokens.load()
    return tokens
  }
  const records = (): Array<Record<string, unknown>> => lines.map((l) => JSON.parse(l))

  beforeEach(() => {
    dir = tempStateDir('session-tokens')
    file = path.join(dir, 'sessions.json')
    lines = []
    log = createLogger(memorySink(lines))
  })
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it(
    'issue gives a tutti_ token that verifies as its workspace, session and provider; ' +
      'anything else does not verify',
    async () => {
      const tokens = await reopen()
      expect(fs.existsSync(file)).toBe(false)
      const token = await tokens.issue('/ws/one', 'sess-1', 'codex')
      expect(token).toMatch(/^tutti_[A-Za-z0-9_-]{43}$/)
      expect(tokens.size).toBe(1)
      expect(tokens.verify(token)).toEqual({
        workspace: '/ws/one',
        session: 'sess-1',
        provider: 'codex',
        issuedAt: expect.any(String),
        hash: hashToken(token),
      })
      expect(Number.isNaN(Date.parse(tokens.verify(token)!.issuedAt))).toBe(false)
      expect(tokens.verify(undefined)).toBeUndefined()
      expect(tokens.verify('')).toBeUndefined()
      // the hash itself, the token without its prefix, a near miss
      expect(tokens.verify(hashToken(token))).toBeUndefined()
      expect(tokens.verify(token.slice('tutti_'.length))).toBeUndefined()
      expect(tokens.verify(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined()
      expect(tokens.verify(`${token} `)).toBeUndefined()
      const other = await tokens.issue('/ws/one', 'sess-2', 'claude')
      expect(other).not.toBe(token)
      expect(tokens.verify(other)).toMatchObject({ session: 'sess-2', provider: 'claude' })
    },
  )

  it(
    're-issuing for the same workspace and session revokes the old token before issue returns, and tells the ' +
      'listeners which',
    async () => {
      const tokens = await reopen()
      const old = await tokens.issue('/ws', 's', 'codex')
      const neighbour = await tokens.issue('/ws', 's-other', 'codex')
      const elsewhere = await tokens.issue('/ws-2', 's', 'codex')
      const seen: Array<{ revoked: RevokedSession[]; oldStillValid: boolean }> = []
      tokens.onRevoked((revoked) => {
        seen.push({ revoked, oldStillValid: tokens.verify(old) !== undefined })
      })
      const fresh = await tokens.issue('/ws', 's', 'claude')
      expect(tokens.verify(old)).toBeUndefined()
      expect(tokens.verify(fresh)).toMatchObject({ workspace: '/ws', session: 's', provider: 'claude' })
      // the listener ran within issue(), with the old token already refused
      expect(seen).toEqual([
        { revoked: [{ hash: hashToken(old), workspace: '/ws', session: 's' }], oldStillValid: false },
      ])
      // another session of the workspace, and the same session id in another workspace, are not the same session
      expect(tokens.verify(neighbour)).toMatchObject({ session: 's-other' })
      expect(tokens.verify(elsewhere)).toMatchObject({ workspace: '/ws-2' })
      expect(tokens.size).toBe(3)
      // and the revocation is on disk: a restarted daemon does not honour the old token either
      const restarted = await reopen()
      expect(restarted.verify(old)).toBeUndefined()
      expect(restarted.verify(fresh)).toMatchObject({ session: 's' })
    },
  )

  it('concurrent re-issues for one session leave exactly one valid token, the last one issued', async () => {
    const tokens = await reopen()
    const issued = await Promise.all(Array.from({ length: 5 }, () => tokens.issue('/ws', 'race', 'codex')))
    expect(new Set(issued).size).toBe(5)
    expect(issued.map((t) => tokens.verify(t) !== undefined)).toEqual([false, false, false, false, true])
    expect(tokens.size).toBe(1)
    const restarted = await reopen()
    expect(issued.map((t) => restarted.verify(t) !== undefined)).toEqual([false, false, false, false, true])
  })

  it(
    'revoke by session, by workspace, by both, and all; ' +
      'an empty filter revokes nothing; listeners hear only real revocations',
    async () => {
      const tokens = await reopen()
      const t = {
        a1: await tokens.issue('/a', '1', 'codex'),
        a2: await tokens.issue('/a', '2', 'codex'),
        b1: await tokens.issue('/b', '1', 'codex'),
        b2: await tokens.issue('/b', '2', 'codex'),
        c3: await tokens.issue('/c', '3', 'codex'),
      }
      const heard: string[][] = []
      tokens.onRevoked((revoked) => void heard.push(revoked.map((r) => `${r.workspace}#${r.session}`).sort()))
      const valid = () =>
        Object.entries(t)
          .filter(([, token]) => tokens.verify(token))
          .map(([name]) => name)

      expect(await tokens.revoke({})).toBe(0)
      expect(await tokens.revoke({ session: 'nobody' })).toBe(0)
      expect(heard).toEqual([])
      expect(valid()).toEqual(['a1', 'a2', 'b1', 'b2', 'c3'])

      expect(await tokens.revoke({ workspace: '/a', session: '1' })).toBe(1)
      expect(valid()).toEqual(['a2', 'b1', 'b2', 'c3'])
      expect(await tokens.revoke({ session: '2' })).toBe(2)
      expect(valid()).toEqual(['b1', 'c3'])
      expect(await tokens.revoke({ workspace: '/b' })).toBe(1)
      expect(valid()).toEqual(['c3'])
      expect(heard).toEqual([['/a#1'], ['/a#2', '/b#2'], ['/b#1']])

      const d = await tokens.issue('/d', '4', 'claude')
      expect(await tokens.revoke({ all: true })).toBe(2)
      expect(tokens.verify(d)).toBeUndefined()
      expect(tokens.size).toBe(0)
      expect(heard.at(-1)).toEqual(['/c#3', '/d#4'])
      expect((await reopen()).size).toBe(0)
    },
  )

  it(
    'revoke waits for every listener ' + '(a listen stream closing, a session directory going) before it resolves',
    async () => {
      const tokens = await reopen()
      await tokens.issue('/ws', 's', 'codex')
      const order: string[] = []
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      let started!: () => void
      const firstStarted = new Promise<void>((r) => (started = r))
      tokens.onRevoked(async () => {
        order.push('first listener started')
        started()
        await gate
        order.push('first listener done')
      })
      tokens.onRevoked(() => void order.push('second listener'))
      const revoking = tokens.revoke({ session: 's' }).then((n) => order.push(`revoke resolved ${n}`))
      await firstStarted
      // held by the first listener: neither the second listener nor revoke's answer can have run
      expect(order).toEqual(['first listener started'])
      release()
      await revoking
      expect(order).toEqual(['first listener started', 'first listener done', 'second listener', 'revoke resolved 1'])
    },
  )

  it(
    'a new instance on the same file honours the issued tokens; ' +
      'the file (0600) holds only hashes, never a raw token',
    async () => {
      const tokens = await reopen()
      const issued = [
        await tokens.issue('/ws', 'one', 'codex'),
        await tokens.issue('/ws', 'two', 'claude'),
        await tokens.issue('/other', 'one', 'acp'),
      ]
      const text = fs.readFileSync(file, 'utf8')
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      for (const token of issued) {
        expect(text).not.toContain(token)
        expect(text).not.toContain(token.slice('tutti_'.length))
        expect(text).toContain(hashToken(token))
      }
      expect(Object.keys(JSON.parse(text).sessions).sort()).toEqual(issued.map(hashToken).sort())
      // no temp file is left beside it
      expect(fs.readdirSync(dir)).toEqual(['sessions.json'])

      const restarted = await reopen()
      expect(restarted.size).toBe(3)
      expect(issued.map((token) => restarted.verify(token))).toEqual([
        {
          workspace: '/ws',
          session: 'one',
          provider: 'codex',
          issuedAt: tokens.verify(issued[0])!.issuedAt,
          hash: hashToken(issued[0]!),
        },
        expect.objectContaining({ workspace: '/ws', session: 'two', provider: 'claude' }),
        expect.objectContaining({ workspace: '/other', session: 'one', provider: 'acp' }),
      ])
      // re-issuing after the restart still revokes the token the previous instance issued
      const again = await restarted.issue('/ws', 'one', 'codex')
      expect(restarted.verify(issued[0])).toBeUndefined()
      expect((await reopen()).verify(again)).toMatchObject({ session: 'one' })
    },
  )

  it(
    '20 concurrent issues for different sessions are all on disk afterwards ' +
      '(writes are serialized, each with the latest state)',
    async () => {
      const tokens = await reopen()
      const issued = await Promise.all(Array.from({ length: 20 }, (_, i) => tokens.issue('/ws', `s${i}`, 'codex')))
      const restarted = await reopen()
      expect(restarted.size).toBe(20)
      for (const [i, token] of issued.entries()) expect(restarted.verify(token)).toMatchObject({ session: `s${i}` })
    },
  )

  it('the raw token is known to the redactor and never written to the log', async () => {
    const tokens = await reopen()
    const token = await tokens.issue('/ws', 's', 'codex')
    await tokens.issue('/ws', 's', 'codex')
    await tokens.revoke({ all: true })
    expect(log.redactor.redactString(`header ${token} end`)).toBe('header [redacted] end')
    expect(lines.join('')).not.toContain(token)
    expect(records().map((r) => r.msg)).toEqual([
      'session token issued',
      'session token issued',
      'session tokens revoked',
    ])
    expect(records()[1]).toMatchObject({ workspace: '/ws', session: 's', provider: 'codex', replaced: 1 })
  })

  describe('an unreadable sessions.json', () => {
    const unreadable = (): Array<Record<string, unknown>> =>
      records().filter((r) => r.msg === 'sessions.json unreadable; moved aside, starting with no sessions')
    const asides = () =>
      fs.readdirSync(path.dirname(file)).filter((n) => n.startsWith(`${path.basename(file)}.unreadable-`))

    it.each([
      ['not JSON', '{"schemaVersion": 1, "sessions": {'],
      ['JSON of another shape', '["tutti"]'],
      ['another schema version', JSON.stringify({ schemaVersion: 2, sessions: {} })],
      [
        'a record missing a field',
        JSON.stringify({
          schemaVersion: 1,
          sessions: { ['a'.repeat(64)]: { workspace: '/ws', session: 's', provider: 'codex' } },
        }),
      ],
    ])(
      '%s: load warns once, honours no token, and moves the file aside as it was (the next issue never overwrites it)',
      async (_label, content) => {
        fs.writeFileSync(file, content, { mode: 0o600 })
        const tokens = await reopen()
        expect(tokens.size).toBe(0)
        expect(tokens.verify(`tutti_${'a'.repeat(43)}`)).toBeUndefined()
        expect(unreadable()).toHaveLength(1)
        expect(unreadable()[0]).toMatchObject({ level: 'warn' })
        expect(asides()).toHaveLength(1)
        const token = await tokens.issue('/ws', 's', 'codex')
        expect(fs.readFileSync(path.join(path.dirname(file), asides()[0]!), 'utf8')).toBe(content)
        expect(tokens.verify(token)).toBeDefined()
      },
    )

    it('a write that fails does not break the writes after it, and its token never verifies', async () => {
      const tokens = await reopen()
      fs.mkdirSync(file)
      await expect(tokens.issue('/ws', 'lost', 'codex')).rejects.toThrow()
      expect(tokens.size).toBe(0)
      fs.rmdirSync(file)
      const token = await tokens.issue('/ws', 'kept', 'codex')
      expect(tokens.verify(token)).toMatchObject({ session: 'kept' })
      expect(
        Object.values(JSON.parse(fs.readFileSync(file, 'utf8')).sessions).map(
          (r) => (r as { session: string }).session,
        ),
      ).toEqual(['kept'])
    })
  })
})
