import type { Logger } from '../log/logger.js'
import type { SessionOwner, SessionRecord } from './session-record.js'
import { ownerGone } from './session-owner.js'
import { expiryMs, type SessionTokens } from './session-tokens.js'

/**
 * When the owners are looked at after a connection to the daemon closed: a
 * process's sockets close a moment before the kernel has it gone (exit, or
 * a zombie), so first shortly after, then once more a little later.
 */
const OWNER_LOOKS_AFTER_CLOSE_MS = [100, 2_000] as const
/**
 * Owners whose end no closed connection told of (an exec killed while its
 * daemon watch was down) are looked at this often: one kill(0) and one small
 * /proc read per owned session.
 */
const OWNER_SWEEP_MS = 60_000
/** setTimeout's longest delay (about 24.8 days); an expiry further off is armed again when that fires. */
const MAX_TIMER_MS = 2 ** 31 - 1

export interface SessionLifetimeOptions {
  /** The clock (tests set it; it must be the one the tokens read). */
  now?: () => number
  /** Whether an owner is proven gone (tests set it). */
  ownerGone?: (owner: SessionOwner) => boolean
}

/**
 * Ends the sessions that end by themselves (issue 23): a token past its
 * expiry, and a token whose owning process (`session exec`, `session
 * bridge`) is proven gone, the way a revoke does (streams closed,
 * directories removed). At start, at the soonest expiry (one timer, armed
 * again on every issue), after a connection to the daemon closed (an
 * owner's held-open watch ends when it dies), and every minute. Nothing is
 * ever signalled.
 */
export class SessionLifetime {
  private readonly now: () => number
  private readonly gone: (owner: SessionOwner) => boolean
  private expiryTimer?: NodeJS.Timeout
  private sweepTimer?: NodeJS.Timeout
  private readonly lookTimers = new Set<NodeJS.Timeout>()
  private lookScheduled = false
  private pruning: Promise<number> = Promise.resolve(0)
  private stopped = false

  constructor(
    private readonly tokens: SessionTokens,
    private readonly log: Logger,
    options: SessionLifetimeOptions = {},
  ) {
    this.now = options.now ?? Date.now
    this.gone = options.ownerGone ?? ownerGone
    tokens.onIssued(() => this.arm())
  }

  /** Prune what ended while no daemon ran, then keep pruning. */
  async start(): Promise<void> {
    await this.prune()
    if (this.stopped) return
    this.arm()
    this.sweepTimer = setInterval(() => void this.prune(), OWNER_SWEEP_MS)
    this.sweepTimer.unref()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.expiryTimer)
    clearInterval(this.sweepTimer)
    for (const t of this.lookTimers) clearTimeout(t)
    this.lookTimers.clear()
  }

  /** A connection to the daemon closed: perhaps the owner of a session died with it. */
  connectionClosed(): void {
    if (this.stopped || this.lookScheduled) return
    this.lookScheduled = true
    for (const [i, ms] of OWNER_LOOKS_AFTER_CLOSE_MS.entries()) {
      const timer = setTimeout(() => {
        this.lookTimers.delete(timer)
        // a close during the looks is covered by the looks still to come, except after the first
        if (i === 0) this.lookScheduled = false
        void this.prune()
      }, ms)
      timer.unref()
      this.lookTimers.add(timer)
    }
  }

  /** End every session that has expired or whose owner is gone; resolves with how many. One prune at a time. */
  prune(): Promise<number> {
    const run = this.pruning.then(async () => {
      if (this.stopped) return 0
      const now = this.now()
      const expired = this.tokens.matching((r) => expiryMs(r) <= now)
      const orphaned = this.tokens.matching((r) => expiryMs(r) > now && this.ownerProvenGone(r))
      let ended = 0
      for (const [hashes, why] of [
        [expired, 'expired'],
        [orphaned, 'owner gone'],
      ] as const) {
        if (!hashes.length) continue
        try {
          ended += await this.tokens.end(hashes, why)
        } catch (err) {
          // the tokens no longer verify all the same, and the next write of sessions.json leaves them out
          this.log.error('could not write sessions.json after ending sessions', { why, error: err })
        }
      }
      return ended
    })
    this.pruning = run
    return run
  }

  private ownerProvenGone(record: SessionRecord): boolean {
    return record.owner !== undefined && this.gone(record.owner)
  }

  /** One timer, for the soonest expiry. */
  private arm(): void {
    if (this.stopped) return
    clearTimeout(this.expiryTimer)
    const next = this.tokens.nextExpiry()
    if (next === undefined) return
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.now()))
    this.expiryTimer = setTimeout(() => {
      void this.prune().then(() => this.arm())
    }, delay)
    this.expiryTimer.unref()
  }
}
