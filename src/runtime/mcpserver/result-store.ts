import { randomBytes } from 'node:crypto'
import type { ToolCallResult } from '../registry/route.js'
import { layOut, pieceOf, type Layout, type ResourceItem } from './result-pieces.js'

/**
 * The whole results of cut tool calls (result-caps.ts), readable for a
 * while as `tutti://results/<id>` by the session that made the call, and by
 * no other: another session's read is "not found", as for an id that never
 * was. Memory only, never on disk; bounded in time (TTL) and in bytes (the
 * oldest go first): per session, so that one session's flood of large
 * results drops its own older ones rather than another session's, and in
 * all. The id is 128 random bits.
 */
export const RESULT_URI_PREFIX = 'tutti://results/'

export const RESULT_STORE_LIMITS = {
  /** How long a whole result stays readable after its call. */
  ttlMs: 15 * 60_000,
  /** All whole results together, by their size (result-size.ts); the oldest are dropped to keep a new one. */
  totalBytes: 64 * 1024 * 1024,
  /** One session's whole results together: its own oldest are dropped first (an upstream message is at most 16 MiB). */
  sessionBytes: 16 * 1024 * 1024,
}

export type StoreLimits = { readonly [K in keyof typeof RESULT_STORE_LIMITS]: number }

interface Entry {
  readonly session: string
  readonly result: ToolCallResult
  readonly bytes: number
  /** The cap that cut it: the size of a piece. */
  readonly pieceBytes: number
  readonly expires: number
  /** Laid out at the first read, and kept. */
  layout?: Layout
}

export type Kept = { uri: string } | { unkept: string }

export type StoredRead = { contents: ResourceItem[] }

const ID = /^([A-Za-z0-9_-]{22})(?:\/([1-9][0-9]{0,7}))?$/

export class ResultStore {
  private readonly entries = new Map<string, Entry>()
  private bytes = 0
  /** By session, the bytes of its entries. */
  private readonly sessionBytes = new Map<string, number>()
  private timer?: NodeJS.Timeout

  constructor(
    readonly limits: StoreLimits = RESULT_STORE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  get minutes(): number {
    return Math.round(this.limits.ttlMs / 60_000)
  }

  /** What the store holds: results and their size. */
  get held(): { results: number; bytes: number } {
    return { results: this.entries.size, bytes: this.bytes }
  }

  /** Keeps `result` (its size: `bytes`) for `session`: its URI, or why it is not kept. */
  put(session: string, result: ToolCallResult, bytes: number, pieceBytes: number): Kept {
    const most = Math.min(this.limits.totalBytes, this.limits.sessionBytes)
    if (bytes > most) return { unkept: `larger than the ${mib(most)} tutti keeps for a session` }
    this.sweep()
    for (const [id, entry] of this.entries) {
      if ((this.sessionBytes.get(session) ?? 0) + bytes <= this.limits.sessionBytes) break
      if (entry.session === session) this.drop(id, entry)
    }
    for (const [id, entry] of this.entries) {
      if (this.bytes + bytes <= this.limits.totalBytes) break
      this.drop(id, entry)
    }
    const id = randomBytes(16).toString('base64url')
    this.entries.set(id, { session, result, bytes, pieceBytes, expires: this.now() + this.limits.ttlMs })
    this.bytes += bytes
    this.sessionBytes.set(session, (this.sessionBytes.get(session) ?? 0) + bytes)
    this.schedule()
    return { uri: `${RESULT_URI_PREFIX}${id}` }
  }

  /**
   * resources/read of a stored result (or one of its pieces) for `session`;
   * undefined when there is none for that session: never kept, expired,
   * dropped, another session's, or no such piece.
   */
  read(uri: string, session: string): StoredRead | undefined {
    if (!uri.startsWith(RESULT_URI_PREFIX)) return undefined
    const match = ID.exec(uri.slice(RESULT_URI_PREFIX.length))
    if (!match) return undefined
    const id = match[1]!
    const entry = this.entries.get(id)
    if (!entry || entry.session !== session) return undefined
    if (entry.expires <= this.now()) {
      this.drop(id, entry)
      return undefined
    }
    const base = `${RESULT_URI_PREFIX}${id}`
    entry.layout ??= layOut(entry.result, entry.pieceBytes, base)
    const contents = pieceOf(entry.layout, base, Number(match[2] ?? 1))
    return contents && { contents }
  }

  /** The results of sessions that ended (revoked): nobody can read them any more. */
  forget(sessions: readonly string[]): void {
    const gone = new Set(sessions)
    for (const [id, entry] of this.entries) if (gone.has(entry.session)) this.drop(id, entry)
  }

  close(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.entries.clear()
    this.bytes = 0
    this.sessionBytes.clear()
  }

  private drop(id: string, entry: Entry): void {
    this.entries.delete(id)
    this.bytes -= entry.bytes
    const left = (this.sessionBytes.get(entry.session) ?? 0) - entry.bytes
    if (left > 0) this.sessionBytes.set(entry.session, left)
    else this.sessionBytes.delete(entry.session)
  }

  /** Entries are kept in the order they expire: the expired ones are at the head. */
  private sweep(): void {
    const now = this.now()
    for (const [id, entry] of this.entries) {
      if (entry.expires > now) break
      this.drop(id, entry)
    }
  }

  /** A timer at the oldest entry's expiry frees the memory of results nobody reads; it never keeps the daemon up. */
  private schedule(): void {
    if (this.timer || !this.entries.size) return
    const head = this.entries.values().next().value as Entry
    this.timer = setTimeout(
      () => {
        this.timer = undefined
        this.sweep()
        this.schedule()
      },
      Math.max(0, head.expires - this.now()) + 1,
    )
    this.timer.unref()
  }
}

const mib = (bytes: number): string => `${Math.round(bytes / 1024 / 1024)} MiB`
