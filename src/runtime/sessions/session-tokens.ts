import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import { z } from 'zod'
import { readJsonIfExists, writeJsonAtomic } from '../fs/atomic-write.js'
import type { Logger } from '../log/logger.js'
import { SessionActivity, type SessionActivityView } from './session-activity.js'
import { recordSchema, type SessionOwner, type SessionRecord } from './session-record.js'
import { SessionView, type ViewLayer } from './session-view.js'

const fileSchema = z.object({ schemaVersion: z.literal(1), sessions: z.record(z.string(), recordSchema) })

const TOKEN_PREFIX = 'tutti_'

/** A token that was revoked, with the session it belonged to (its projection directory goes with it). */
export interface RevokedSession {
  hash: string
  workspace: string
  session: string
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** What a token is issued with besides its session: its view, its end, the process that owns it. */
export interface IssueOptions {
  view?: ViewLayer[]
  expiresAt?: string
  owner?: SessionOwner
}

/** A token that verified once: the token, the record it verified as (while that record lives), and the answer. */
interface Verified {
  token: string
  record: SessionRecord
  answer: Readonly<SessionRecord & { hash: string }>
  /** When it stops verifying (ms; Infinity: never by itself). */
  expires: number
}

/** A record's end in ms; one whose expiry cannot be read has ended (a damaged file must not make a token immortal). */
export function expiryMs(record: SessionRecord): number {
  if (record.expiresAt === undefined) return Number.POSITIVE_INFINITY
  const ms = Date.parse(record.expiresAt)
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms
}

/** Equal strings, in time that depends on their length only (a token's length is no secret). */
function sameToken(a: string, b: string): boolean {
  let diff = a.length ^ b.length
  for (let i = 0; i < a.length && i < b.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * Per-agent-session bearer tokens for the local `connector` MCP server
 * (DESIGN §10). A token is a connection capability bound to one workspace +
 * agent session, not a per-connector permission. Only SHA-256 hashes are
 * stored, so a restarted daemon keeps honouring running sessions without
 * ever having the raw tokens on disk. Re-issuing for the same session
 * revokes the old token at once.
 */
export class SessionTokens {
  /** token hash → record */
  private readonly byHash = new Map<string, SessionRecord>()
  /** token hash → its compiled view, for sessions whose view narrows anything */
  private readonly views = new Map<string, SessionView>()
  /**
   * token → what it verified as, for the daemon's life: SHA-256 on every
   * request cost ~8 µs of a ~100 µs tools/call. Only tokens that verified
   * get in (at most one per live session), and an entry counts only while
   * `byHash` still holds its very record, so a revocation takes effect at
   * once; `take` also drops the entry, so a revoked token is not held.
   */
  private readonly verified = new Map<string, Verified>()
  private readonly revokeListeners = new Set<(revoked: RevokedSession[]) => void | Promise<void>>()
  private readonly issueListeners = new Set<(record: SessionRecord) => void>()
  private persisting: Promise<void> = Promise.resolve()
  /** Which live sessions the connector server was reached with (request-guard.ts counts). */
  readonly activity = new SessionActivity()

  constructor(
    private readonly file: string,
    private readonly log: Logger,
    /** The clock expiries are read against (tests set it). */
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A file that cannot be read as ours (damaged, or another schema) is moved
   * aside, never overwritten: its sessions are gone for this daemon, but
   * nothing is lost, and the next write starts a file of our own.
   */
  async load(): Promise<void> {
    let raw: unknown
    try {
      raw = await readJsonIfExists(this.file)
    } catch (err) {
      // setAside logs it, moves the file aside and starts with no sessions
      return this.setAside('not valid JSON', err)
    }
    if (raw === undefined) return // no session was ever issued here
    const parsed = fileSchema.safeParse(raw)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      return this.setAside(`not a schemaVersion 1 session file (${issue?.path.join('.') || 'root'}: ${issue?.message})`)
    }
    for (const [hash, record] of Object.entries(parsed.data.sessions)) this.set(hash, record)
  }

  private set(hash: string, record: SessionRecord): void {
    this.byHash.set(hash, record)
    const view = SessionView.of(record.view)
    if (view.whole) this.views.delete(hash)
    else this.views.set(hash, view)
  }

  /** What the session of `hash` sees (the hot path: one map lookup). */
  viewOf(hash: string): SessionView {
    return this.views.get(hash) ?? SessionView.WHOLE
  }

  /** The live sessions whose view narrows what they see, with that view. */
  narrowed(): Array<{ hash: string; record: SessionRecord; view: SessionView }> {
    return [...this.views].map(([hash, view]) => ({ hash, record: this.byHash.get(hash)!, view }))
  }

  /** The record of a live session, by its token's hash. */
  record(hash: string): SessionRecord | undefined {
    return this.byHash.get(hash)
  }

  private async setAside(why: string, error?: unknown): Promise<void> {
    const aside = `${this.file}.unreadable-${Date.now()}`
    // the file may be gone meanwhile; the warning below is logged either way
    await fs.rename(this.file, aside).catch(() => undefined)
    this.log.warn('sessions.json unreadable; moved aside, starting with no sessions', {
      why,
      movedTo: aside,
      ...(error ? { error } : {}),
    })
  }

  get size(): number {
    return this.byHash.size
  }

  /** Every live session with its requests so far, and (`more`) what else the caller knows of it (daemon status). */
  activityView(more?: (hash: string, view: SessionView) => Partial<SessionActivityView>): SessionActivityView[] {
    return this.activity.view(this.byHash, more && ((hash) => more(hash, this.viewOf(hash))))
  }

  async issue(workspace: string, session: string, provider: string, options: IssueOptions = {}): Promise<string> {
    const stale = this.take(this.matching((r) => r.workspace === workspace && r.session === session))
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
    this.log.redactor.addSecret(token)
    const hash = hashToken(token)
    const record: SessionRecord = { workspace, session, provider, issuedAt: new Date(this.now()).toISOString() }
    if (options.expiresAt) record.expiresAt = options.expiresAt
    if (options.owner) record.owner = options.owner
    if (options.view?.length) record.view = options.view
    this.set(hash, record)
    try {
      await this.persist()
    } catch (err) {
      // a token that was never handed out must not verify
      this.byHash.delete(hash)
      this.views.delete(hash)
      throw err
    }
    if (stale.length) await this.emitRevoked(stale)
    this.log.info('session token issued', {
      workspace,
      session,
      provider,
      replaced: stale.length,
      ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}),
      ...(record.owner ? { ownerPid: record.owner.pid } : {}),
    })
    for (const listener of this.issueListeners) listener(record)
    return token
  }

  verify(token: string | undefined): (SessionRecord & { hash: string }) | undefined {
    if (!token?.startsWith(TOKEN_PREFIX)) return undefined
    const known = this.verified.get(token)
    if (known) {
      // the map finds the entry by the string's hash code; the characters are compared in constant time all the same
      if (sameToken(token, known.token) && this.byHash.get(known.answer.hash) === known.record) {
        // an expired token is refused at once, before the timer prunes its record
        return this.now() < known.expires ? known.answer : undefined
      }
      this.verified.delete(token)
    }
    const hash = hashToken(token)
    const record = this.byHash.get(hash)
    if (!record) return undefined
    const expires = expiryMs(record)
    if (this.now() >= expires) return undefined
    const answer = Object.freeze({ ...record, hash })
    this.verified.set(token, { token, record, answer, expires })
    return answer
  }

  async revoke(filter: { session?: string; workspace?: string; all?: boolean }): Promise<number> {
    const hashes = this.matching(
      (r) =>
        !!filter.all ||
        ((filter.session === undefined || r.session === filter.session) &&
          (filter.workspace === undefined || r.workspace === filter.workspace)),
    )
    if (!filter.all && filter.session === undefined && filter.workspace === undefined) return 0
    const revoked = this.take(hashes)
    if (revoked.length) {
      await this.persist()
      await this.emitRevoked(revoked)
    }
    this.log.info('session tokens revoked', { ...filter, revoked: hashes.length })
    return hashes.length
  }

  /**
   * End the sessions of these hashes as a revoke does (their listen streams
   * close, their directories go), for `why` (expired, owner gone); returns
   * how many were still there.
   */
  async end(hashes: readonly string[], why: string): Promise<number> {
    const ended = this.take(hashes)
    if (!ended.length) return 0
    await this.persist()
    await this.emitRevoked(ended)
    this.log.info('session tokens ended', { why, sessions: ended.map((e) => e.session) })
    return ended.length
  }

  /** The soonest a live token expires (ms), or undefined when none does. */
  nextExpiry(): number | undefined {
    let soonest = Number.POSITIVE_INFINITY
    for (const record of this.byHash.values()) soonest = Math.min(soonest, expiryMs(record))
    return soonest === Number.POSITIVE_INFINITY ? undefined : soonest
  }

  /** Listen for every token issued (an expiry may now come sooner). */
  onIssued(listener: (record: SessionRecord) => void): void {
    this.issueListeners.add(listener)
  }

  /** Listen for revocations (open listen streams close, session directories go); revoke waits for them. */
  onRevoked(listener: (revoked: RevokedSession[]) => void | Promise<void>): void {
    this.revokeListeners.add(listener)
  }

  /** The hashes of the live sessions `pred` picks. */
  matching(pred: (r: SessionRecord) => boolean): string[] {
    return [...this.byHash].filter(([, r]) => pred(r)).map(([h]) => h)
  }

  /** Forget these tokens; returns what was forgotten. */
  private take(hashes: readonly string[]): RevokedSession[] {
    const out: RevokedSession[] = []
    for (const hash of hashes) {
      const record = this.byHash.get(hash)
      if (!record) continue
      this.byHash.delete(hash)
      this.views.delete(hash)
      for (const [token, v] of this.verified) if (v.answer.hash === hash) this.verified.delete(token)
      out.push({ hash, workspace: record.workspace, session: record.session })
    }
    this.activity.forget(hashes)
    return out
  }

  private async emitRevoked(revoked: RevokedSession[]): Promise<void> {
    for (const listener of this.revokeListeners) await listener(revoked)
  }

  private persist(): Promise<void> {
    // serialize writes; each writes the latest state, whatever became of the one before
    const write = this.persisting
      // the write before failed to its own caller; this one writes the latest state regardless
      .catch(() => undefined)
      .then(() => writeJsonAtomic(this.file, { schemaVersion: 1, sessions: Object.fromEntries(this.byHash) }))
    this.persisting = write
    return write
  }
}
