/**
 * What travels with one upstream request made for a session (a tools/call,
 * a prompts/get, a resources/read): where the upstream's messages about it
 * go. The connector server builds one per request; the upstream side finds
 * it again when the upstream sends progress, a log message or a request of
 * its own while serving that request (upstream/call-relays.ts). The
 * registry only names the shape: no SDK, no HTTP.
 */

/** The requests a server may send its client while serving a request (SEP-2322 calls them input requests). */
export type ServerRequestMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list'

export const SERVER_REQUEST_METHODS: readonly ServerRequestMethod[] = [
  'elicitation/create',
  'sampling/createMessage',
  'roots/list',
]

export interface CallProgress {
  progress: number
  total?: number
  message?: string
}

export interface CallLogMessage {
  level: string
  logger?: string
  data: unknown
}

export interface CallRelay {
  /**
   * The session (its token's hash) whose request this is. A request from the
   * upstream is only ever relayed to this session, and a session's requests
   * in flight decide where an unassociated one goes (call-relays.ts).
   */
  readonly session: string
  /** Present when the caller asked for progress: called with the upstream's, sent on with the caller's own token. */
  readonly progress?: (progress: CallProgress) => void
  /** Present when the caller takes log messages: the ones the upstream sends while serving this request. */
  readonly log?: (message: CallLogMessage) => void
  /** The level a 2026-07-28 upstream is asked to log at for this request (its `_meta` logLevel). */
  readonly logLevel?: string
  /**
   * A request the upstream sent while serving this one, answered by the
   * session's client (or refused with the error to answer the upstream
   * with). Absent: the caller can answer none, and the upstream is told so.
   */
  readonly request?: (
    method: ServerRequestMethod,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ) => Promise<Record<string, unknown>>
  /** True while a request relayed for it waits for the client's answer (relay-association.ts). */
  readonly awaitingClient?: () => boolean
  /** What the caller declared it can answer, when known (its upstream is told: upstream/call-relays.ts). */
  readonly capabilities?: ClientCapabilities
  /**
   * Present when the caller answers input_required rounds itself (2026-07-28): an upstream on a 2026-07-28 link
   * that answers with one gets it passed through (UpstreamInputRequired), and this round's answers and the
   * upstream's own requestState go back to it as they came.
   */
  readonly rounds?: UpstreamRound
}

/** What a caller's round gives back to the upstream that asked: its answers, and the upstream's requestState. */
export interface UpstreamRound {
  inputResponses?: Record<string, unknown>
  requestState?: string
}

/**
 * An upstream on a 2026-07-28 link answered input_required to a caller
 * that answers rounds itself: its requests go to the caller under the
 * upstream's own keys, its requestState inside tutti's own (the connector
 * server's input-rounds.ts). Thrown, so that nothing on the way treats it
 * as the request's result.
 */
export class UpstreamInputRequired extends Error {
  constructor(
    readonly inputRequests: Record<string, unknown>,
    readonly requestState: string | undefined,
  ) {
    super('the upstream asks the caller for input')
    this.name = 'UpstreamInputRequired'
  }
}

/** MCP's client capabilities, as a client declared them (initialize, or a 2026-07-28 request's `_meta`). */
export type ClientCapabilities = Record<string, unknown>

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * The capabilities a client must have declared to be sent this request:
 * URL-mode elicitation needs `elicitation.url`, form mode `elicitation.form`,
 * sampling with tools `sampling.tools` (the SDK's own table,
 * requiredClientCapabilitiesForInputRequest, which it does not export).
 */
export function requiredCapabilities(
  method: ServerRequestMethod,
  params: Record<string, unknown> | undefined,
): ClientCapabilities {
  switch (method) {
    case 'elicitation/create':
      return params?.mode === 'url' ? { elicitation: { url: {} } } : { elicitation: { form: {} } }
    case 'sampling/createMessage':
      return params?.tools !== undefined || params?.toolChoice !== undefined
        ? { sampling: { tools: {} } }
        : { sampling: {} }
    case 'roots/list':
      return { roots: {} }
  }
}

/**
 * What of `required` the client did not declare (undefined: nothing is
 * missing). A bare `elicitation: {}` counts as form mode, its meaning
 * before modes existed (the SDK's missingClientCapabilities).
 */
export function missingCapabilities(
  required: ClientCapabilities,
  declared: ClientCapabilities | undefined,
): ClientCapabilities | undefined {
  const missing: ClientCapabilities = {}
  for (const [name, need] of Object.entries(required)) {
    const has = declared?.[name]
    if (has === undefined) {
      missing[name] = need
      continue
    }
    if (!isObject(need) || !isObject(has)) continue
    const members: Record<string, unknown> = {}
    for (const [member, value] of Object.entries(need)) {
      const bareForm = name === 'elicitation' && member === 'form' && has.form === undefined && has.url === undefined
      if (has[member] === undefined && !bareForm) members[member] = value
    }
    if (Object.keys(members).length) missing[name] = members
  }
  return Object.keys(missing).length ? missing : undefined
}

/**
 * A relayed request's params without the upstream's own progressToken:
 * it names the upstream's request to tutti, and means nothing to the
 * client, which is asked under another id (or in a round).
 */
export function withoutUpstreamToken(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta
  if (!isObject(meta) || !('progressToken' in meta)) return params
  const { progressToken: _token, ...rest } = meta
  const { _meta: _all, ...others } = params!
  return Object.keys(rest).length ? { ...others, _meta: rest } : others
}

/**
 * What of `offered` (the capabilities tutti's upstream client declared for
 * all callers) this caller declared too; undefined when it declared all of
 * it, so that nothing narrower needs saying.
 */
export function narrowedTo(offered: ClientCapabilities, declared: ClientCapabilities): ClientCapabilities | undefined {
  const kept: ClientCapabilities = {}
  for (const [name, offer] of Object.entries(offered)) {
    const has = declared[name]
    if (has === undefined) continue
    if (!isObject(offer) || !Object.keys(offer).length || !isObject(has)) {
      kept[name] = offer
      continue
    }
    const bare = name === 'elicitation' && has.form === undefined && has.url === undefined
    const members = Object.entries(offer).filter(([m]) => has[m] !== undefined || (bare && m === 'form'))
    if (members.length) kept[name] = Object.fromEntries(members)
  }
  return JSON.stringify(kept) === JSON.stringify(offered) ? undefined : kept
}

/** What the upstream is told when the caller did not declare what its request needs. */
export function undeclaredMessage(method: ServerRequestMethod, missing: ClientCapabilities): string {
  const names = Object.entries(missing).flatMap(([name, need]) => {
    const members = isObject(need) ? Object.keys(need) : []
    return members.length ? members.map((m) => `${name}.${m}`) : [name]
  })
  return `the client that made this call did not declare ${names.join(', ')} (needed for ${method})`
}
