import { ErrorCodes, TuttiError } from '../errors.js'

/**
 * Every limit and timeout of the daemon's HTTP surface, in one place. The
 * clients are local agents and the CLI: they send a request at once and in
 * full, so anything slow or oversized is a misbehaving or hostile client, and
 * it must never cost the daemon memory, CPU or sockets that other sessions
 * need.
 */
export const DEFAULT_HTTP_LIMITS = {
  /** Largest MCP request body (a tools/call with big arguments fits easily); more → 413. */
  mcpBodyBytes: 4 * 1024 * 1024,
  /** Largest control request body (the CLI sends small JSON); more → 413. */
  controlBodyBytes: 1024 * 1024,
  /** Largest request head (node's default, named here); more → 431. */
  maxHeaderBytes: 16 * 1024,
  /** A request head must arrive in full within this of the connection or of its first byte (→ 408, closed). */
  headersTimeoutMs: 10_000,
  /**
   * A whole request (head and body) must arrive within this. It bounds only
   * receiving the request: a `subscriptions/listen` stream or a long
   * tools/call answers for as long as it needs.
   */
  requestTimeoutMs: 60_000,
  /** How often node checks the two timeouts above (its default of 30 s would let them run 30 s late). */
  timeoutCheckIntervalMs: 1_000,
  /**
   * A refused request whose body is still arriving gets its answer, a FIN,
   * and is reset this much later, unread: long enough for the client to
   * read the answer, too short to be a resource.
   */
  refusedLingerMs: 500,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: 5_000,
  /** At most this many idle keep-alive connections; beyond it the longest idle ones are closed. */
  maxIdleSockets: 64,
  /**
   * MCP requests of one session (by its token) in flight at once, listen streams included; the next is
   * answered 429 before its body is read. A bridge sends at most BRIDGE_LIMITS.requestsInFlight plus its
   * listen streams; a client fanning out calls sends 100 at once (upstream-faults.test.ts upgrades under
   * 100): this is past both, and still bounds what one session's bodies, sockets and answers can hold
   * (a client that never reads held 1,000s).
   */
  mcpRequestsPerSession: 128,
  /**
   * `subscriptions/listen` streams one session may hold open; the next is refused (429). A client opens
   * one per set of notifications it wants, a few at most; one token held 2,000 of them.
   */
  listenStreamsPerSession: 16,
  /**
   * Listen streams of all sessions together: each holds a socket (a file descriptor) and the SDK's
   * stream state for as long as it is open; many sessions' streams must leave room for everything else.
   */
  listenStreams: 256,
  /** SSE comment frames this often keep an open stream from looking dead to clients and proxies. */
  sseKeepAliveMs: 15_000,
  /** A recurring warning (the idle cap closing connections, accept failing) is logged at most this often. */
  warnEveryMs: 60_000,
} as const

export type HttpLimits = { readonly [K in keyof typeof DEFAULT_HTTP_LIMITS]: number }

/**
 * Tests shrink the timeouts (or grow the keep-alive) with
 * TUTTI_DAEMON_HTTP_LIMITS, a JSON object of some of the keys above, read
 * only here and only by the daemon process. Anything malformed fails the
 * daemon's start: a knob that silently does nothing would make a test lie.
 */
export const HTTP_LIMITS_ENV = 'TUTTI_DAEMON_HTTP_LIMITS'

export function resolveHttpLimits(raw: string | undefined): HttpLimits {
  if (!raw) return DEFAULT_HTTP_LIMITS
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    // JSON.parse's own message adds nothing the user can act on
    throw limitsInvalid(`${HTTP_LIMITS_ENV} is not JSON`)
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw limitsInvalid(`${HTTP_LIMITS_ENV} must be a JSON object`)
  const limits: Record<string, number> = { ...DEFAULT_HTTP_LIMITS }
  for (const [key, value] of Object.entries(parsed)) {
    if (!Object.hasOwn(DEFAULT_HTTP_LIMITS, key)) throw limitsInvalid(`${HTTP_LIMITS_ENV}: unknown limit "${key}"`)
    if (!Number.isSafeInteger(value) || (value as number) <= 0)
      throw limitsInvalid(`${HTTP_LIMITS_ENV}: ${key} must be a positive integer`)
    limits[key] = value as number
  }
  // node refuses a headers timeout longer than the request timeout
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw limitsInvalid(`${HTTP_LIMITS_ENV}: headersTimeoutMs must not exceed requestTimeoutMs`)
  return limits as HttpLimits
}

export const HTTP_LIMITS: HttpLimits = resolveHttpLimits(process.env[HTTP_LIMITS_ENV])

/**
 * The limits of `tutti session bridge`, beside the daemon's: the bridge is a client of this surface and
 * must stay under its per-session caps. Not tunable: a bridge follows no environment knob.
 */
export const BRIDGE_LIMITS = {
  /**
   * Client requests (and notifications) the bridge forwards at once; past it, it reads no more of stdin
   * until an answer goes out. A stdio client's parallel calls are a handful; with the bridge's listen
   * streams this stays under the daemon's mcpRequestsPerSession, so the daemon never refuses a bridge.
   * Each holds its request and its answer in the bridge: 32 cost a never-reading client 5 MB more than 16.
   */
  requestsInFlight: 16,
  /**
   * Bytes of those requests (each is held, and parsed, until it settles): a handful of calls with large
   * arguments go at once, more wait; one larger than this (up to the daemon's mcpBodyBytes) goes alone.
   */
  requestBytesInFlight: 4 * 1024 * 1024,
  /**
   * Answers the client has not read yet (stdout's queue) past this make the bridge read no more of stdin,
   * nor of the daemon's answers, until stdout drains: a reading client drains it at once, whatever the
   * answers' size, and one that never reads costs the bridge at most this (and the answers in flight).
   */
  unreadAnswerBytes: 256 * 1024,
  /** stdout not drained for this long: the client has stopped reading, and its log (stderr) is told once. */
  unreadWarnMs: 5_000,
} as const

/** A bad TUTTI_HTTP_LIMITS is the user's input: the daemon does not start, and says which limit. */
const limitsInvalid = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)
