import { readMessages } from './answer-stream.js'
import { errorLine, INTERNAL_ERROR, type ClientMessage } from './client-message.js'
import type { DaemonHttp, Exchange } from './daemon-http.js'
import type { DaemonLink, Link } from './daemon-link.js'
import type { McpHeaders } from './mcp-headers.js'
import type { StdoutBacklog } from './stdout-backlog.js'

type Message = Extract<ClientMessage, { kind: 'request' | 'notification' | 'response' }>

/** The daemon's refusal of a 2026-07-28 tools/call whose `Mcp-Param-*` headers are missing or wrong (SEP-2243). */
const HEADER_MISMATCH = -32020

/** The bridge's own tools/list, to learn `x-mcp-header` declarations: bounded like any client's walk of the pages. */
const LIST_ID = 'tutti-bridge-tools'
const MAX_LIST_PAGES = 64

const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!

/**
 * One message to the daemon and its answer back, through whatever the
 * daemon's going and coming did to the link: a connection refused (nothing
 * listens any more) or a 401 (the token was revoked: `daemon stop`, or a
 * restart that revoked it) never reached a tool, so the message is sent
 * once more on a new link. A message the daemon had and did not answer in
 * full is answered with an MCP error and never sent again.
 */
export class Forwarder {
  constructor(
    private readonly link: DaemonLink,
    private readonly http: DaemonHttp,
    private readonly headers: McpHeaders,
    /** The client's unread answers: past the mark, answers are read no further until it reads. */
    private readonly backlog?: StdoutBacklog,
  ) {}

  /**
   * `onMessage` gets each message of the answer (none for a notification); an error answer when there is no answer to
   * give.
   */
  async forward(
    message: Message,
    signal: AbortSignal | undefined,
    onMessage: (payload: string) => void,
  ): Promise<void> {
    const fail = (why: string) => {
      if (message.kind === 'request' && !signal?.aborted) onMessage(errorLine(message.id, INTERNAL_ERROR, why))
    }
    let retried = false
    let learnt = false
    for (;;) {
      let link: Link
      try {
        link = await this.link.ready()
      } catch (err) {
        // the client hears why, as this request's JSON-RPC error
        return fail(`the tutti daemon cannot be reached: ${firstLine(err)}`)
      }
      const ex = await this.http.post(link, this.headers.of(message), message.bytes, signal)
      if (signal?.aborted) {
        if (ex.kind === 'answer') ex.response.resume()
        return
      }
      const again = !retried && this.retryable(link, ex)
      if (again) {
        retried = true
        if (ex.kind === 'answer') ex.response.resume()
        continue
      }
      if (ex.kind !== 'answer')
        return fail(
          ex.kind === 'refused'
            ? `the tutti daemon cannot be reached: ${ex.reason}`
            : `the tutti daemon went away while answering (${ex.reason}); the call may or may not have run`,
        )
      if (message.kind !== 'request') {
        ex.response.resume()
        return
      }
      if (ex.status === 400 && message.method === 'tools/call' && !learnt) {
        // a 2026-07-28 call of a tool whose x-mcp-header declarations the bridge has not seen in a list yet
        const body = await readAll(ex).catch(() => undefined)
        if (body === undefined) return fail('the tutti daemon went away while answering')
        if (errorCode(body) !== HEADER_MISMATCH) return onMessage(withId(body, message.id))
        learnt = true
        await this.learnToolHeaders(link, message, signal)
        continue
      }
      return this.relay(message, ex, signal, fail, onMessage)
    }
  }

  /**
   * The tools' `x-mcp-header` declarations, from a tools/list of the
   * bridge's own in the call's era (every page), so that the call can be
   * sent again with its `Mcp-Param-*` headers.
   */
  private async learnToolHeaders(
    link: Link,
    call: Extract<Message, { kind: 'request' }>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const meta = (call.params as { _meta?: unknown } | undefined)?._meta
    let cursor: string | undefined
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const list = { id: LIST_ID, method: 'tools/list', params: { _meta: meta, ...(cursor ? { cursor } : {}) } }
      const bytes = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...list }))
      const ex = await this.http.post(link, this.headers.of({ kind: 'request', ...list, bytes }), bytes, signal)
      if (ex.kind !== 'answer') return
      // a list cut off teaches no headers: the call is sent again, and relayed as the daemon answers it
      const body = await readAll(ex).catch(() => undefined)
      if (body === undefined || ex.status !== 200) return
      this.headers.learn(body)
      const next = (JSON.parse(body) as { result?: { nextCursor?: unknown } }).result?.nextCursor
      if (typeof next !== 'string') return
      cursor = next
    }
  }

  /** Whether `ex` never reached a tool, so that sending again on a new link is safe. */
  private retryable(link: Link, ex: Exchange): boolean {
    if (ex.kind === 'refused' || (ex.kind === 'answer' && ex.status === 401)) {
      this.link.drop(link)
      return true
    }
    return false
  }

  private async relay(
    message: Extract<Message, { kind: 'request' }>,
    ex: Extract<Exchange, { kind: 'answer' }>,
    signal: AbortSignal | undefined,
    fail: (why: string) => void,
    onMessage: (payload: string) => void,
  ): Promise<void> {
    const json = ex.contentType.includes('application/json')
    if (!json && !ex.contentType.includes('text/event-stream')) {
      ex.response.resume()
      return fail(`the tutti daemon answered HTTP ${ex.status} without a JSON-RPC message`)
    }
    // a stream may carry notifications (progress) before the answer: only the answer itself settles the request
    const idText = `"id":${JSON.stringify(message.id)}`
    let answered = false
    try {
      await readMessages(
        ex.response,
        ex.contentType,
        (payload) => {
          if (signal?.aborted) return 'stop'
          if (payload.includes(idText) && (payload.includes('"result"') || payload.includes('"error"'))) answered = true
          onMessage(ex.status === 200 ? payload : withId(payload, message.id))
        },
        this.backlog,
      )
    } catch (err) {
      // after the answer or a cancel, a cut-off stream is expected; otherwise the client hears why
      if (signal?.aborted || answered) return
      return fail(`the tutti daemon went away while answering (${firstLine(err)}); the call may or may not have run`)
    }
    if (!answered && !signal?.aborted)
      fail(`the tutti daemon answered HTTP ${ex.status} without an answer to the request`)
  }
}

/**
 * An HTTP-level refusal carries id null when the daemon refused before reading the request: it is this request's
 * answer.
 */
function withId(payload: string, id: string | number): string {
  try {
    const answer = JSON.parse(payload) as { id?: unknown; error?: { code?: unknown } }
    if (answer.id === null && answer.error) return JSON.stringify({ ...answer, id })
  } catch {
    // not JSON: passed on as it is, the client reports it
  }
  return payload
}

/** The whole answer as one message (a JSON body, or an event stream's single message). */
async function readAll(ex: Extract<Exchange, { kind: 'answer' }>): Promise<string> {
  let out = ''
  await readMessages(ex.response, ex.contentType, (payload) => {
    out += payload
  })
  return out
}

function errorCode(payload: string): unknown {
  try {
    return (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code
  } catch {
    // not JSON: no error code, so no header mismatch; the payload is relayed as it is
    return undefined
  }
}
