import { describe, expect, it } from 'vitest'
import { ErrorCodes, isTuttiError } from '../../src/runtime/errors.js'
import {
  DEFAULT_SESSION_TTL_SECONDS,
  expiryOf,
  parseTtl,
  requestedTtl,
} from '../../src/runtime/sessions/session-ttl.js'

const thrown = (fn: () => unknown): unknown => {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('did not throw')
}

describe('session TTLs', () => {
  it('a whole number and one unit of s, m, h or d', () => {
    expect(parseTtl('30s', '--ttl')).toBe(30)
    expect(parseTtl('90m', '--ttl')).toBe(90 * 60)
    expect(parseTtl('12h', '--ttl')).toBe(12 * 3600)
    expect(parseTtl('7d', '--ttl')).toBe(7 * 24 * 3600)
    expect(parseTtl('3650d', '--ttl')).toBe(3650 * 24 * 3600)
  })

  it('anything else is bad input that names where it came from', () => {
    for (const bad of ['', '0m', '00m', '05m', '1.5h', '7 d', ' 7d', '7d ', '7D', '10', 'm', '-1d', '1w', '1h30m']) {
      const err = thrown(() => parseTtl(bad, '--ttl'))
      expect(isTuttiError(err) && err.code, bad).toBe(ErrorCodes.ARGUMENT_INVALID)
      expect((err as Error).message, bad).toMatch(/^--ttl: .* is not a duration; give a whole number and one unit/)
    }
    const long = thrown(() => parseTtl('3651d', 'TUTTI_SESSION_TTL'))
    expect(isTuttiError(long) && long.code).toBe(ErrorCodes.ARGUMENT_INVALID)
    expect((long as Error).message).toBe('TUTTI_SESSION_TTL: 3651d is longer than a session may live (3650d)')
  })

  it('the flag wins; TUTTI_SESSION_TTL is the default of tokens no process owns; a bad one is refused anyway', () => {
    const env = { TUTTI_SESSION_TTL: '2h' }
    expect(requestedTtl('5m', env, false)).toBe(300)
    expect(requestedTtl(undefined, env, false)).toBe(7200)
    expect(requestedTtl(undefined, env, true)).toBeUndefined()
    expect(requestedTtl('5m', env, true)).toBe(300)
    expect(requestedTtl(undefined, {}, false)).toBeUndefined()
    for (const owned of [false, true])
      expect((thrown(() => requestedTtl('5m', { TUTTI_SESSION_TTL: '2 hours' }, owned)) as Error).message).toMatch(
        /^TUTTI_SESSION_TTL: "2 hours" is not a duration/,
      )
    expect((thrown(() => requestedTtl('soon', env, false)) as Error).message).toMatch(/^--ttl: "soon"/)
  })

  it('expiry: the TTL asked for; none for an owner the daemon can watch; else the 7-day default', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z')
    const owner = { pid: 42, start: '123' }
    const iso = (seconds: number) => new Date(now + seconds * 1000).toISOString()
    expect(DEFAULT_SESSION_TTL_SECONDS).toBe(7 * 24 * 3600)
    expect(expiryOf({ ttlSeconds: 60 }, now, () => true)).toBe(iso(60))
    expect(expiryOf({ ttlSeconds: 60, owner }, now, () => true)).toBe(iso(60))
    expect(expiryOf({ owner }, now, () => true)).toBeUndefined()
    expect(expiryOf({ owner }, now, () => false)).toBe(iso(DEFAULT_SESSION_TTL_SECONDS))
    expect(expiryOf({}, now, () => true)).toBe(iso(DEFAULT_SESSION_TTL_SECONDS))
  })
})
