import { SERVER_INFO_META_KEY } from '@modelcontextprotocol/server'
import { HTTPResponse } from 'h3'
import { SERVER_NAME } from '../names.js'
import { CallCancel } from '../registry/call-cancel.js'
import type { ToolCallResult } from '../registry/route.js'
import type { SessionView } from '../sessions/session-view.js'
import { PRODUCT_VERSION } from '../version.js'
import type { Era, McpRequest } from './classify.js'
import { ListAnswers } from './list-answers.js'
import { failure, type ToolOutcome, type ToolService } from './tool-service.js'

/**
 * The hot paths, `tools/call` and `tools/list`, without building an SDK
 * server per request. `createMcpHandler` costs ~1.3 ms a request on its own
 * (a fresh Server, zod parsing, a per-request transport; see bench/), more
 * than the whole budget for forwarding a call, and re-validates thousands
 * of tools on every list.
 *
 * It takes only requests that are exactly right: any doubt (a header that
 * needs decoding, extra `_meta`, a cursor, an unknown tool, an unusual
 * Accept) returns undefined and the SDK serves the request. The calling is
 * the tool service's; this file only encodes, and only the common case: a
 * plain result. An error, or a result the SDK would normalize, goes to the
 * SDK to encode (`sdk`), with the call already made, so the SDK's own rules
 * for each era (error codes, HTTP statuses, wording) are never copied here.
 * In-process tests hold the two to the same bytes.
 */
export type SdkEncoder = (settled: ToolOutcome) => Promise<Response>

const SERVER_INFO = { name: SERVER_NAME, version: PRODUCT_VERSION }
const SERVER_INFO_JSON = JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO })

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * A result the SDK sends as it is (stamped with resultType and serverInfo on
 * 2026-07-28); others it normalizes. Results come from the SDK client, which
 * has already ordered their keys as the schema does and dropped unknown
 * content keys, just as the SDK server's validation would.
 */
function plainResult(r: ToolCallResult): boolean {
  return Array.isArray(r.content) && r.resultType === undefined && (r._meta === undefined || isPlainObject(r._meta))
}

const STAMP = `,"resultType":"complete","_meta":${SERVER_INFO_JSON}}`

/**
 * A plain result as the SDK sends it: as it is on 2025-06-18; on
 * 2026-07-28 followed by resultType and a _meta of connector's serverInfo
 * (the bytes of `{ ...result, resultType, _meta }`, without building it
 * when the result has no _meta of its own: ~4 µs of a call in a loop).
 */
function encodeResult(era: Era, result: ToolCallResult): string {
  if (era === 'legacy') return JSON.stringify(result)
  if (result._meta === undefined) return `${JSON.stringify(result).slice(0, -1)}${STAMP}`
  return JSON.stringify({
    ...result,
    resultType: 'complete',
    _meta: { ...(result._meta as Record<string, unknown>), [SERVER_INFO_META_KEY]: SERVER_INFO },
  })
}

/** A fast answer (status 200), written as it is: an h3 HTTPResponse, or straight to node's response. */
export interface FastAnswer {
  /** In the order a web Headers lists them (sorted), so both paths put the same bytes on the wire. */
  readonly headers: Readonly<Record<string, string>>
  /** One string, or the buffers that follow each other (a tools/list: its cached bytes around the id). */
  readonly body: string | readonly Buffer[]
}

function modernAnswer(payload: string): FastAnswer {
  return {
    headers: { 'content-length': String(Buffer.byteLength(payload)), 'content-type': 'application/json' },
    body: payload,
  }
}

function legacyAnswer(payload: string): FastAnswer {
  const body = `event: message\ndata: ${payload}\n\n`
  return { headers: legacyHeaders(Buffer.byteLength(body)), body }
}

function legacyHeaders(length: number): Record<string, string> {
  return {
    'cache-control': 'no-cache, no-transform',
    'content-length': String(length),
    'content-type': 'text/event-stream',
    'x-accel-buffering': 'no',
  }
}

/*
 * h3's HTTPResponse with a string body and a known length is written with one
 * writeHead + write, without a web stream or chunked encoding: on the hot path
 * that saves a syscall and the stream machinery per request.
 */
const toHttpResponse = (answer: FastAnswer): HTTPResponse =>
  new HTTPResponse(typeof answer.body === 'string' ? answer.body : Buffer.concat(answer.body), {
    status: 200,
    headers: answer.headers,
  })

export class FastPath {
  /** The encoded tools/list of each view (list-answers.ts). */
  private readonly listAnswers = new ListAnswers(SERVER_INFO_JSON)

  constructor(
    private readonly tools: ToolService,
    /** A call that may carry more than its answer (server-request-relay.ts: needsStream) is the SDK's. */
    private readonly needsStream: (era: Era, body: Record<string, unknown>, session: string) => boolean = () => false,
  ) {}

  /** The h3 path: a response (promise) when this path serves the request, else undefined. */
  tryHandle(
    request: McpRequest,
    body: Record<string, unknown>,
    req: Request,
    session: string,
    view: SessionView,
    sdk: SdkEncoder,
  ): Promise<Response | HTTPResponse> | HTTPResponse | undefined {
    const { era, method } = request
    if (!era || !request.exact) return undefined
    if (method === 'tools/list') return toHttpResponse(this.list(era, body.id, view))
    if (!request.binding || this.needsStream(era, body, session)) return undefined
    // req.signal aborts when the client goes away: the upstream call is cancelled too
    return this.callResponse(era, request, body, session, req.signal, sdk)
  }

  private async callResponse(
    era: Era,
    request: McpRequest,
    body: Record<string, unknown>,
    session: string,
    signal: AbortSignal,
    sdk: SdkEncoder,
  ): Promise<Response | HTTPResponse> {
    const answer = await this.call(era, request, body, session, CallCancel.following(signal))
    return 'body' in answer ? toHttpResponse(answer) : sdk(answer)
  }

  /** Whether `serve` takes this request: classified exactly right, a call of a known tool that needs no stream. */
  takes(request: McpRequest, body: Record<string, unknown>, session: string): boolean {
    const { era } = request
    if (era === undefined || !request.exact) return false
    return request.method === 'tools/list' || (request.binding !== undefined && !this.needsStream(era, body, session))
  }

  list(era: Era, requestId: unknown, view: SessionView): FastAnswer {
    const { head, tail } = this.listAnswers.get(this.tools.snapshot(), view, this.tools.snapshot(view)).bytes(era)
    const id = Buffer.from(JSON.stringify(requestId))
    const length = head.length + id.length + tail.length
    const headers =
      era === 'legacy'
        ? legacyHeaders(length)
        : { 'content-length': String(length), 'content-type': 'application/json' }
    return { headers, body: [head, id, tail] }
  }

  /** The call made; its answer, or (an error, a result the SDK normalizes) the outcome for the SDK to encode. */
  async call(
    era: Era,
    request: McpRequest,
    body: Record<string, unknown>,
    session: string,
    cancel: CallCancel,
  ): Promise<FastAnswer | ToolOutcome> {
    const params = body.params as { name: string; arguments?: Record<string, unknown> }
    const outcome = await this.tools.call(request.binding, params.name, params.arguments, {
      cancel,
      session,
      ...(request.view.unprefixed !== undefined ? { unprefixed: true } : {}),
      ...(era === 'legacy' ? { legacy: { session, id: body.id } } : {}),
      // whose call it is (an upstream's request is never relayed to another session); it can be sent nothing
      relay: { session },
    })
    if (!outcome.ok || !plainResult(outcome.result)) return outcome
    let payload: string
    try {
      payload = `{"result":${encodeResult(era, outcome.result)},"jsonrpc":"2.0","id":${JSON.stringify(body.id)}}`
    } catch (err) {
      // answered as the call's protocol error, like any failed call (tool-service.ts)
      return failure(err, outcome.connector)
    }
    return era === 'modern' ? modernAnswer(payload) : legacyAnswer(payload)
  }
}
