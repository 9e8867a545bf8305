import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { hashToken, SessionTokens } from '../../src/runtime/sessions/session-tokens.js'
import { tempStateDir } from '../support/tutti.js'

// SessionTokens remembers a token once it has verified, so that a request
// does not pay for SHA-256: what must hold is that the memo never outlives
// the token (revocation, re-issue, restart) and never admits a near miss.
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>()
  const counted = { ...real, createHash: vi.fn(real.createHash) }
  return { ...counted, default: counted }
})
const hashes = (): number => vi.mocked(crypto.createHash).mock.calls.length

describe('SessionTokens: verified tokens are remembered', () => {
  let dir: string
  let tokens: SessionTokens
  beforeEach(async () => {
    dir = tempStateDir('verified-tokens')
    tokens = new SessionTokens(path.join(dir, 'sessions.json'), createLogger(memorySink([])))
    await tokens.load()
  })
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a token that verified once verifies again without being hashed, as the same session', async () => {
    const token = await tokens.issue('/ws', 's', 'codex')
    const first = tokens.verify(token)
    const before = hashes()
    for (let i = 0; i < 100; i++) expect(tokens.verify(token)).toEqual(first)
    expect(hashes()).toBe(before)
    expect(first).toMatchObject({ workspace: '/ws', session: 's', hash: hashToken(token) })
  })

  it('near misses of a remembered token do not verify, and are never remembered', async () => {
    const token = await tokens.issue('/ws', 's', 'codex')
    tokens.verify(token)
    const last = token.at(-1) === 'A' ? 'B' : 'A'
    for (const miss of [
      `${token.slice(0, -1)}${last}`,
      token.slice(0, -1),
      `${token}A`,
      `tutti_${token.slice(6).toUpperCase()}`,
    ]) {
      const before = hashes()
      expect(tokens.verify(miss)).toBeUndefined()
      expect(tokens.verify(miss)).toBeUndefined()
      // each try is hashed again: a wrong token is not remembered
      expect(hashes() - before).toBe(2)
    }
  })

  it(
    'revoking a remembered token takes effect at once: ' + 'already inside the revoke listeners, and afterwards',
    async () => {
      const token = await tokens.issue('/ws', 's', 'codex')
      const other = await tokens.issue('/ws', 'other', 'codex')
      expect(tokens.verify(token)).toBeDefined()
      expect(tokens.verify(other)).toBeDefined()
      const inListener: unknown[] = []
      tokens.onRevoked(() => void inListener.push(tokens.verify(token)))
      await tokens.revoke({ session: 's' })
      expect(inListener).toEqual([undefined])
      expect(tokens.verify(token)).toBeUndefined()
      expect(tokens.verify(other)).toMatchObject({ session: 'other' })
    },
  )

  it('re-issuing for the session revokes the remembered token before issue returns; the new one verifies', async () => {
    const old = await tokens.issue('/ws', 's', 'codex')
    expect(tokens.verify(old)).toBeDefined()
    const seen: unknown[] = []
    tokens.onRevoked(() => void seen.push(tokens.verify(old)))
    const fresh = await tokens.issue('/ws', 's', 'claude')
    expect(seen).toEqual([undefined])
    expect(tokens.verify(old)).toBeUndefined()
    expect(tokens.verify(fresh)).toMatchObject({ provider: 'claude' })
  })

  it('revoke all forgets every remembered token; a new instance on the file verifies by hash as before', async () => {
    const a = await tokens.issue('/ws', 'a', 'codex')
    const b = await tokens.issue('/ws', 'b', 'codex')
    tokens.verify(a)
    tokens.verify(b)
    const reopened = new SessionTokens(path.join(dir, 'sessions.json'), createLogger(memorySink([])))
    await reopened.load()
    expect(reopened.verify(a)).toMatchObject({ session: 'a' })
    await tokens.revoke({ all: true })
    expect(tokens.verify(a)).toBeUndefined()
    expect(tokens.verify(b)).toBeUndefined()
  })
})
