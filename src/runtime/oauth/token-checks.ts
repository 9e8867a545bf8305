/**
 * A token this close to its expiry is refreshed before it is sent (at most half its lifetime, for short-lived ones).
 */
export const REFRESH_BEFORE_EXPIRY_MS = 60_000

/**
 * The largest access or refresh token tutti stores and sends. Real ones, JWTs
 * included, are a few KiB; a larger one passes no server's header limit, so
 * the connector would show ready while every call failed.
 */
export const MAX_TOKEN_BYTES = 16 * 1024

/** Why a token response may not be stored (a token past MAX_TOKEN_BYTES), or undefined. */
export function oversizedToken(tokens: { access_token?: unknown; refresh_token?: unknown }): string | undefined {
  for (const field of ['access_token', 'refresh_token'] as const) {
    const value = tokens[field]
    const size = typeof value === 'string' ? Buffer.byteLength(value) : 0
    if (size > MAX_TOKEN_BYTES) {
      const article = field === 'access_token' ? 'an' : 'a'
      return (
        `the authorization server issued ${article} ${field} of ${size} bytes ` +
        `(tutti accepts at most ${MAX_TOKEN_BYTES / 1024} KiB)`
      )
    }
  }
  return undefined
}

/** Whether a token obtained at `obtainedAt` (ms) that lives `expiresIn` seconds is due for a refresh. */
export function expiresSoon(expiresIn: number | undefined, obtainedAt: number | undefined): boolean {
  if (expiresIn === undefined || obtainedAt === undefined) return false
  const lifetime = expiresIn * 1000
  return Date.now() >= obtainedAt + lifetime - Math.min(REFRESH_BEFORE_EXPIRY_MS, lifetime / 2)
}

/**
 * The scope tokens asked for beyond the granted ones, comma-separated (a space-separated list reads like "Basic
 * <token>" to the log redactor).
 */
export function missingScopes(asked: string, granted: unknown): string {
  const held = new Set(typeof granted === 'string' ? granted.split(' ') : [])
  return asked
    .split(' ')
    .filter((s) => s && !held.has(s))
    .join(', ')
}
