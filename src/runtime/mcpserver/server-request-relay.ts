import { randomUUID } from 'node:crypto'
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { CallCancel } from '../registry/call-cancel.js'
import {
  missingCapabilities,
  requiredCapabilities,
  undeclaredMessage,
  withoutUpstreamToken,
  type CallRelay,
  type ClientCapabilities,
} from '../registry/call-relay.js'
import type { Era } from './classify.js'
import { ClientAnswers, isJsonRpcResponse } from './client-answers.js'
import { InputRounds } from './input-rounds.js'
import { declaresRelayed, isLogLevel, LegacyClients, passes } from './legacy-clients.js'
import type { RoundSink } from './relayed-call.js'

type Notification = { method: string; params: Record<string, unknown> }

/**
 * Everything that reaches a caller from the upstream serving its request,
 * besides the answer: progress, log messages, and the upstream's own
 * requests (elicitation, sampling, roots), in the caller's era. 2025-06-18:
 * on the request's SSE stream, a request's answer POSTed back
 * (client-answers.ts). 2026-07-28: on the request's response stream, a
 * request as an input_required round (input-rounds.ts). What the upstream
 * side does is in upstream/call-relays.ts; the rules are in
 * docs/decisions/server-request-relay.md.
 */
export class ServerRequestRelay {
  readonly legacy = new LegacyClients()
  readonly answers = new ClientAnswers()
  readonly rounds = new InputRounds()

  /**
   * Serves a tools/call, prompts/get or resources/read whose upstream
   * request `run` makes (resolving with the result, throwing the client's
   * error). `subject` names it (method and name or URI): a retry must
   * name the same.
   */
  serve(
    era: Era | undefined,
    session: string,
    server: Server,
    ctx: ServerContext,
    subject: string,
    run: (relay: CallRelay, cancel: CallCancel) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    const notes = new StreamNotes(ctx)
    const served =
      era === 'modern'
        ? this.rounds.serve(session, subject, ctx, modernSink(ctx, notes), run)
        : run(this.legacyRelay(session, server, ctx, notes), CallCancel.following(ctx.mcpReq.signal))
    // what the upstream said before its answer is on the stream before the answer
    return served.finally(() => notes.flushed())
  }

  /** A POSTed JSON-RPC response, answered here: 202 when it was a waiting request's answer, else 400. */
  answered(session: string, message: Record<string, unknown>): Response | undefined {
    if (!isJsonRpcResponse(message)) return undefined
    if (this.answers.answer(session, message)) return new Response(null, { status: 202 })
    const error = {
      code: ProtocolErrorCode.InvalidRequest,
      message: `Invalid Request: no request of this session waits for an answer with id ${JSON.stringify(message.id)}`,
    }
    return Response.json({ jsonrpc: '2.0', id: null, error }, { status: 400 })
  }

  /**
   * A call that may have to carry more than its answer, which the fast path
   * (one answer, written at once) leaves to the SDK: a 2025 session that
   * declared requests it takes or set a log level, a 2026-07-28 request
   * that declares requests it takes (progress and logLevel are extra
   * `_meta`, which the fast path never takes).
   */
  needsStream(era: Era, body: Record<string, unknown>, session: string): boolean {
    if (era === 'legacy') return this.legacy.needsStream(session)
    const meta = (body.params as { _meta?: Record<string, unknown> } | undefined)?._meta
    return declaresRelayed(meta?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
  }

  /** logging/setLevel of a 2025 session: kept for its later requests (each is served by a fresh server). */
  serveLogging(server: Server, era: Era | undefined, session: string): void {
    if (era !== 'legacy') return
    server.setRequestHandler('logging/setLevel', async (req) => {
      const { level } = req.params
      if (!isLogLevel(level)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown log level "${level}"`)
      this.legacy.setLevel(session, level)
      return {}
    })
  }

  dispose(): void {
    this.rounds.dispose()
  }

  /** A 2025 request's relay: its stream, the session's initialize capabilities and log level. */
  private legacyRelay(session: string, server: Server, ctx: ServerContext, notes: StreamNotes): CallRelay {
    const notify = notes.send
    const token = progressTokenOf(ctx)
    const level = this.legacy.level(session)
    const capabilities = this.legacy.capabilities(session)
    const send = (message: Record<string, unknown>) =>
      // the SDK's transport writes a message related to the request on that request's SSE stream
      server.transport!.send(message as never, { relatedRequestId: ctx.mcpReq.id })
    let asking = 0
    return {
      session,
      awaitingClient: () => asking > 0,
      ...(capabilities ? { capabilities } : {}),
      ...(token !== undefined
        ? { progress: (p) => notify({ method: 'notifications/progress', params: { progressToken: token, ...p } }) }
        : {}),
      ...(level
        ? {
            logLevel: level,
            log: (m) => {
              if (passes(m.level, level)) notify({ method: 'notifications/message', params: { ...m } })
            },
          }
        : {}),
      request: async (method, params, signal) => {
        const missing = missingCapabilities(requiredCapabilities(method, params), capabilities)
        if (missing)
          throw new MissingRequiredClientCapabilityError(
            { requiredCapabilities: missing as never },
            undeclaredMessage(method, missing),
          )
        // a URL-mode elicitation of a 2026-07-28 upstream has no elicitationId; the 2025 shape requires one
        const own = withoutUpstreamToken(params)
        const sent =
          method === 'elicitation/create' && own?.mode === 'url' && own.elicitationId === undefined
            ? { ...own, elicitationId: randomUUID() }
            : own
        const until = AbortSignal.any([signal, ctx.mcpReq.signal])
        asking++
        try {
          return await this.answers.ask(session, method, sent, send, until)
        } finally {
          asking--
        }
      },
    }
  }
}

/** A 2026-07-28 round's sink: its response stream, its progressToken, its `_meta` logLevel and capabilities. */
function modernSink(ctx: ServerContext, notes: StreamNotes): RoundSink {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
  const level = envelope?.[LOG_LEVEL_META_KEY]
  const token = progressTokenOf(ctx)
  return {
    notify: notes.send,
    ...(token !== undefined ? { progressToken: token } : {}),
    ...(isLogLevel(level) ? { logLevel: level } : {}),
    capabilities: (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? {},
  }
}

function progressTokenOf(ctx: ServerContext): string | number | undefined {
  const token = (ctx.mcpReq._meta as { progressToken?: unknown } | undefined)?.progressToken
  return typeof token === 'string' || typeof token === 'number' ? token : undefined
}

/**
 * Notifications on one request's stream. The SDK writes a notification a
 * few turns after it is sent, and the request's answer closes the stream:
 * the answer waits until those sent before it are written (`flushed`).
 */
class StreamNotes {
  private readonly pending = new Set<Promise<unknown>>()

  constructor(private readonly ctx: ServerContext) {}

  readonly send = (n: Notification): void => {
    // one that cannot be written any more has nobody left to read it
    const sent = this.ctx.mcpReq.notify(n as never).catch(() => undefined)
    this.pending.add(sent)
    void sent.then(() => this.pending.delete(sent))
  }

  async flushed(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending)
  }
}
