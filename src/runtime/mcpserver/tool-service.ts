import {
  ProtocolError,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  type CallToolResult,
} from '@modelcontextprotocol/server'
import { createHash } from 'node:crypto'
import { ErrorCodes, isTuttiError, TuttiError } from '../errors.js'
import { CallCancel } from '../registry/call-cancel.js'
import { UpstreamInputRequired, type CallRelay } from '../registry/call-relay.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { publishedContent } from '../registry/published-content.js'
import { ownTool } from '../registry/unprefixed.js'
import { toMcpTool } from '../registry/mcp-tool.js'
import type { ConnectorMCPTool, MCPToolBinding, ToolCallResult } from '../registry/route.js'
import { PerView, SessionView } from '../sessions/session-view.js'
import { type CallSignIn, needsSignIn } from './call-sign-in.js'
import type { LegacyCancellation } from './legacy-cancellation.js'
import { ResultCaps } from './result-caps.js'

/** How a tools/call ended: the upstream's result, or the JSON-RPC error to answer with. */
export type ToolOutcome =
  | { ok: true; result: ToolCallResult; connector: string }
  | { ok: false; error: ProtocolError | UpstreamInputRequired }

export interface CallOptions {
  /** Ends the call when the client goes away (or the SDK ends the exchange): the upstream call is cancelled too. */
  cancel?: CallCancel
  /** The same as an AbortSignal, where the caller has one (the SDK handler's); `cancel` wins. */
  signal?: AbortSignal
  /** A 2025-era call, which a later `notifications/cancelled` of the same session may cancel. */
  legacy?: { session: string; id: unknown }
  /** The calling session (its token's hash): the only one that may read the whole of a cut result. */
  session?: string
  /** The session sees its connector unprefixed: the result's resource URIs stay its server's own. */
  unprefixed?: boolean
  /** The session the call is made for, and where the upstream's progress, logs and requests about it go. */
  relay?: CallRelay
  /** Made again after the caller signed in: a second need is answered, not asked again. */
  afterSignIn?: true
}

/**
 * tools/list and tools/call against the registry, for both serving paths:
 * the fast path encodes what this returns, the SDK handlers return it to
 * the SDK. Nothing else touches a binding's client. A result over its cap
 * is cut here (result-caps.ts), so both paths send the same cut result.
 */
export class ToolService {
  constructor(
    private readonly registry: ConnectorMCPRegistry,
    private readonly cancellation: LegacyCancellation,
    readonly caps: ResultCaps = new ResultCaps(),
    /** tutti's own URL-mode elicitation when a call needs the user to sign in again (call-sign-in.ts). */
    private readonly signIn?: CallSignIn,
  ) {}

  /** By registry snapshot, then view print: the print of what that view sees (list_changed compares them). */
  private readonly prints = new PerView<string>()

  /** By registry snapshot, then view print: an unprefixed session's tools under their upstreams' names. */
  private readonly own = new PerView<readonly ConnectorMCPTool[]>()

  /**
   * The tools a session's view sees of the registry, as served to it: the same frozen array until a commit changes
   * the snapshot, each tool under its upstream's own name for an unprefixed session (a view's `as`).
   */
  snapshot(view: SessionView = SessionView.WHOLE): readonly ConnectorMCPTool[] {
    const all = this.registry.list()
    if (view.unprefixed === undefined) return view.tools(all)
    return this.own.get(all, view, () => view.tools(all).map(ownTool))
  }

  /** Equal exactly when the tools `view` sees, as served, are the same. */
  print(view: SessionView): string {
    const all = this.registry.list()
    return this.prints.get(all, view, () => {
      const hash = createHash('sha256')
      for (const tool of this.snapshot(view)) hash.update(tool.json).update('\n')
      return hash.digest('hex')
    })
  }

  /** Every tool the view sees, on one page; a cursor is one this server never handed out. */
  list(cursor?: string, view: SessionView = SessionView.WHOLE): { tools: unknown[] } {
    if (cursor) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown cursor "${cursor}"`)
    const tools = this.snapshot(view)
    // an unprefixed tool's serialized form is the one that holds its own names
    return { tools: view.unprefixed === undefined ? tools.map(toMcpTool) : tools.map((t) => JSON.parse(t.json)) }
  }

  /** Never throws: every failure is the JSON-RPC error the client gets. */
  async call(
    binding: MCPToolBinding | undefined,
    name: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions,
  ): Promise<ToolOutcome> {
    if (!binding)
      return { ok: false, error: new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool "${name}"`) }
    const cancel = options.cancel ?? (options.signal ? CallCancel.following(options.signal) : new CallCancel())
    const legacy = options.legacy
      ? this.cancellation.register(options.legacy.session, options.legacy.id, cancel)
      : undefined
    let failed: unknown
    try {
      // a removal after the request resolved the binding fences it; a swap to a newer generation does not
      this.registry.assertDispatchable(binding)
      // the signal only exists if the route's client asks for it (a direct call listens to the cancel itself)
      const result = await binding.client.callTool(binding.tool.upstreamName, args, {
        cancel,
        get signal() {
          return cancel.signal
        },
        relay: options.relay,
      })
      // an unprefixed session reads back what its connector's own server named
      const own = withoutUpstreamIdentity(result)
      const published = options.unprefixed ? own : publishedContent(binding.connectorKey, own)
      const served = this.caps.apply(published, binding, options.session)
      return { ok: true, result: served, connector: binding.connectorKey }
    } catch (err) {
      // kept for the answer below (or a sign-in): every failure is the call's answer, never thrown
      failed = err
    } finally {
      legacy?.done()
    }
    // answered as the call's protocol error, naming the connector; unless the caller signed in, and it is made again
    if (!this.signIn || options.afterSignIn || !needsSignIn(failed)) return failure(failed, binding.connectorKey)
    return this.againAfterSignIn(failed, binding, name, args, { ...options, cancel })
  }

  private async againAfterSignIn(
    err: unknown,
    binding: MCPToolBinding,
    name: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions,
  ): Promise<ToolOutcome> {
    const key = binding.connectorKey
    try {
      if (!(await this.signIn!.offer(err, binding, options.relay, options.cancel!))) return failure(err, key)
    } catch (signInFailed) {
      // declined, timed out or refused: what the user reads instead of the first error
      return failure(signInFailed, key)
    }
    const again = this.registry.resolveUpstream(key, binding.tool.upstreamName)
    if (!again) {
      const why = `signed in, but the connector is not serving "${binding.tool.upstreamName}" yet`
      return failure(new TuttiError(ErrorCodes.UPSTREAM_FAILED, `${why} (tutti connector available)`), key)
    }
    return this.call(again, name, args, { ...options, afterSignIn: true })
  }
}

export function failure(err: unknown, connector: string): ToolOutcome {
  // an upstream's own input_required round goes to the caller's rounds (input-rounds.ts) as it is
  if (err instanceof UpstreamInputRequired) return { ok: false, error: err }
  return { ok: false, error: asProtocolError(err, connector) }
}

/**
 * A 2026-07-28 upstream stamps its own serverInfo into a result's `_meta`.
 * That names the upstream hop, not the tool's answer; left in, the SDK would
 * keep it (it stamps its own only where none is), so a client would see the
 * upstream's identity instead of `connector`'s.
 */
export function withoutUpstreamIdentity<T extends Record<string, unknown>>(result: T): T {
  const meta = result._meta
  if (!meta || typeof meta !== 'object' || !(SERVER_INFO_META_KEY in meta)) return result
  const { [SERVER_INFO_META_KEY]: _upstream, ...rest } = meta as Record<string, unknown>
  // rebuilt in the same key order: the SDK client ordered the keys as the SDK server would
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(result)) {
    if (key !== '_meta') out[key] = value
    else if (Object.keys(rest).length) out[key] = rest
  }
  return out as T
}

/**
 * The SDK handler's answer: the result to return, or the error to throw.
 * The SDK serializes a result only after the handler has returned, where a
 * failure leaves the exchange without an answer (a 2026-07-28 call hangs, a
 * 2025-06-18 one gets an empty 200). So a result JSON cannot carry (nested
 * past the stack, in practice) fails here, as the fast path's own
 * serialization does. The check runs a few levels deeper than the result,
 * so that the SDK, serializing from a slightly deeper stack and inside its
 * envelope, cannot overflow where this did not.
 */
const SERIALIZATION_MARGIN = 64

export function answerOrThrow(outcome: ToolOutcome): CallToolResult {
  if (!outcome.ok) throw outcome.error
  let wrapped: unknown = outcome.result
  for (let i = 0; i < SERIALIZATION_MARGIN; i++) wrapped = [wrapped]
  try {
    JSON.stringify(wrapped)
  } catch (err) {
    throw asProtocolError(err, outcome.connector)
  }
  return outcome.result as CallToolResult
}

/**
 * An upstream's JSON-RPC error passes through; anything else is an internal
 * error naming the connector. A RangeError is the result failing to
 * serialize (nested past the stack, or longer than a string may be).
 */
export function asProtocolError(err: unknown, connector: string): ProtocolError {
  if (err instanceof ProtocolError) return err
  if (err instanceof RangeError)
    return new ProtocolError(
      ProtocolErrorCode.InternalError,
      `connector "${connector}": the tool result could not be serialized (${err.message})`,
      { connector },
    )
  const e = err as { code?: unknown; message?: string; data?: unknown }
  if (typeof e.code === 'number' && Number.isInteger(e.code) && e.code < 0)
    return new ProtocolError(e.code, e.message ?? 'upstream error', e.data)
  const message = isTuttiError(err) ? err.message : `connector "${connector}": ${e.message ?? String(err)}`
  return new ProtocolError(ProtocolErrorCode.InternalError, message, { connector })
}
