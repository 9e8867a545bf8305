/** Exponential restart backoff: 250 ms, 500 ms, 1 s … capped at 30 s. */
export const BACKOFF = { initialMs: 250, maxMs: 30_000, factor: 2 } as const

export function backoffDelay(attempt: number): number {
  return Math.min(BACKOFF.maxMs, BACKOFF.initialMs * BACKOFF.factor ** Math.max(0, attempt))
}

/**
 * How long an upstream must stay up before its failures are forgiven. An
 * upstream that initializes and then dies at once would otherwise restart
 * at the initial delay forever.
 */
export const STABLE_AFTER_MS = 60_000
