import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { bearerSession } from '../../src/runtime/mcpserver/request-guard.js'
import { SessionTokens } from '../../src/runtime/sessions/session-tokens.js'
import { tempStateDir } from '../support/tutti.js'

// `daemon status` shows, per live session, how many MCP requests arrived with its token: counted where the
// connector server checks the token (bearerSession), for that session only, and forgotten with the token.
const bearer = (token: string | undefined) => ({
  get: (name: string) => (name === 'authorization' && token !== undefined ? `Bearer ${token}` : null),
})

describe('session activity: the requests that arrived with each session token', () => {
  let dir: string
  let tokens: SessionTokens
  beforeEach(async () => {
    dir = tempStateDir('session-activity')
    tokens = new SessionTokens(path.join(dir, 'sessions.json'), createLogger(memorySink([])))
    await tokens.load()
  })
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a live session is listed with 0 requests and no time until a request presents its token', async () => {
    await tokens.issue('/ws', 'a', 'acp')
    expect(tokens.activityView()).toEqual([{ workspace: '/ws', session: 'a', provider: 'acp', requests: 0 }])
  })

  it("each request with a session's token counts for that session alone; refused ones count for none", async () => {
    const a = await tokens.issue('/ws', 'a', 'acp')
    await tokens.issue('/ws', 'b', 'codex')
    const before = Date.now()
    for (let i = 0; i < 3; i++) expect(bearerSession(tokens, bearer(a))).toBeDefined()
    expect(bearerSession(tokens, bearer(`${a.slice(0, -1)}x`))).toBeUndefined()
    expect(bearerSession(tokens, bearer(undefined))).toBeUndefined()
    const [seenA, seenB] = tokens.activityView()
    expect(seenA).toMatchObject({ session: 'a', requests: 3 })
    expect(Date.parse(seenA!.lastSeenAt!)).toBeGreaterThanOrEqual(before - 1)
    expect(seenB).toEqual({ workspace: '/ws', session: 'b', provider: 'codex', requests: 0 })
  })

  it('a revoked or re-issued session is forgotten: the new token of the same session starts from 0', async () => {
    const a = await tokens.issue('/ws', 'a', 'acp')
    const b = await tokens.issue('/ws', 'b', 'acp')
    bearerSession(tokens, bearer(a))
    bearerSession(tokens, bearer(b))
    await tokens.revoke({ session: 'b' })
    const again = await tokens.issue('/ws', 'a', 'acp')
    expect(tokens.activityView()).toEqual([{ workspace: '/ws', session: 'a', provider: 'acp', requests: 0 }])
    expect(bearerSession(tokens, bearer(a))).toBeUndefined()
    bearerSession(tokens, bearer(again))
    expect(tokens.activityView()).toMatchObject([{ session: 'a', requests: 1 }])
  })
})
