import { ErrorCodes, TuttiError } from '../errors.js'
import { SESSION_TTL_ENV } from '../names.js'
import type { SessionOwner } from './session-record.js'

/**
 * How long a prepared session's token lives when nobody says: a week. Long
 * enough for any agent session a person keeps open; short enough that a
 * token whose host forgot to revoke it does not live on for good.
 */
export const DEFAULT_SESSION_TTL_SECONDS = 7 * 24 * 3600
/** The longest a token may be asked to live (the session-prepare message's bound): ten years. */
export const MAX_SESSION_TTL_SECONDS = 10 * 365 * 24 * 3600

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 24 * 3600 }
const DURATION = /^([1-9][0-9]{0,9})([smhd])$/

/**
 * A TTL as a person writes it (`90m`, `12h`, `7d`, `30s`) in seconds:
 * exactly a positive whole number and one unit, nothing else. `what` names
 * the flag or variable it came from, for the error.
 */
export function parseTtl(text: string, what: string): number {
  const m = DURATION.exec(text)
  if (!m)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `${what}: ${JSON.stringify(text.slice(0, 64))} is not a duration; ` +
        'give a whole number and one unit (s, m, h or d), for example 90m, 12h or 7d',
    )
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!]!
  if (seconds > MAX_SESSION_TTL_SECONDS)
    throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `${what}: ${text} is longer than a session may live (3650d)`)
  return seconds
}

/**
 * The TTL a client asks for: the flag's, else (for a token no process owns)
 * TUTTI_SESSION_TTL's; undefined leaves it to the daemon. A bad value of
 * either is bad input, whether it would be used or not.
 */
export function requestedTtl(flag: string | undefined, env: NodeJS.ProcessEnv, owned: boolean): number | undefined {
  const fromEnv = env[SESSION_TTL_ENV] ? parseTtl(env[SESSION_TTL_ENV], SESSION_TTL_ENV) : undefined
  if (flag !== undefined) return parseTtl(flag, '--ttl')
  return owned ? undefined : fromEnv
}

/**
 * When a token ends by itself: after the TTL it was asked for; else, owned
 * by a process the daemon can watch (`session exec`, `session bridge`),
 * never (it ends with that process, however long the agent runs); else
 * after the default TTL. An owner in another pid namespace is no end the
 * daemon could ever see, so its token gets the default TTL.
 */
export function expiryOf(
  request: { ttlSeconds?: number; owner?: SessionOwner },
  now: number,
  checkable: (owner: SessionOwner) => boolean,
): string | undefined {
  if (request.ttlSeconds !== undefined) return new Date(now + request.ttlSeconds * 1000).toISOString()
  if (request.owner && checkable(request.owner)) return undefined
  return new Date(now + DEFAULT_SESSION_TTL_SECONDS * 1000).toISOString()
}
