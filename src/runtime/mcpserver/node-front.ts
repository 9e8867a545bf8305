import type { IncomingMessage, ServerResponse } from 'node:http'
import { ErrorCodes } from '../errors.js'
import type { HeaderLookup } from '../http-surface/header-lookup.js'
import { readNode } from '../http-surface/read-body.js'
import type { Logger } from '../log/logger.js'
import { CallCancel } from '../registry/call-cancel.js'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import type { SessionTokens } from '../sessions/session-tokens.js'
import type { AppCalls } from './app-calls.js'
import { classifyMcpRequest } from './classify.js'
import type { FastAnswer, FastPath } from './fast-path.js'
import { handOver, type Handover } from './handover.js'
import { bearerSession, declaredTooLarge, MAX_MCP_BODY, paramHeaderMismatch, parseMessage } from './request-guard.js'
import type { SessionRequests } from './session-requests.js'

/**
 * The hot path on node's own request and response, before h3: the web
 * Request/Response adapter costs ~70 µs a request, most of a forwarded
 * call's budget. It serves only what the fast path serves (a plain
 * tools/call or tools/list, classified exactly right), through the same
 * guard, token check and classification the h3 path runs; the daemon's
 * listener has already applied the loopback guard to these headers.
 *
 * Anything else goes to the h3 path: before its body is read (a refused
 * token, a body declared too large, a session at its cap of requests in
 * flight: the h3 path answers and closes as it always has), or after it, handed over with what was decided here
 * (handover.ts), so nothing is read, classified or called twice.
 */
export class NodeFront {
  constructor(
    private readonly sessions: SessionTokens,
    private readonly registry: ConnectorMCPRegistry,
    private readonly fastPath: FastPath,
    private readonly requests: SessionRequests,
    private readonly log: Logger,
    /** An MCP App's own calls, by its server's names (app-calls.ts). */
    private readonly apps?: AppCalls,
  ) {}

  /** false: not taken, the h3 path serves the request; else `toH3` is called if it has to answer after all. */
  serve(req: IncomingMessage, res: ServerResponse, headers: HeaderLookup, toH3: () => void): boolean {
    let session: string | undefined
    try {
      session = bearerSession(this.sessions, headers)
    } catch (err) {
      // the h3 path serves it, and answers its own failure
      this.log.error('the node front failed before taking a request', { error: err })
      return false
    }
    // counted from here to the response's end, whichever path answers it (a handover keeps the count)
    if (!session || declaredTooLarge(headers) || !this.requests.admit(session, res)) return false
    void this.exchange(req, res, headers, session).then(
      (handover) => {
        if (!handover) return
        handOver(req, handover)
        toH3()
      },
      (err: unknown) => this.failed(res, err),
    )
    return true
  }

  /** The answer written, or what the h3 path needs to answer instead. */
  private async exchange(
    req: IncomingMessage,
    res: ServerResponse,
    headers: HeaderLookup,
    session: string,
  ): Promise<Handover | undefined> {
    const message = parseMessage(await readNode(req, MAX_MCP_BODY))
    if (message instanceof Response) return { session, message }
    const view = this.sessions.viewOf(session)
    const appTool = this.apps && ((name: string) => this.apps!.tool(session, view, name))
    const request = classifyMcpRequest(message, headers, this.registry, view, appTool)
    const mismatch = paramHeaderMismatch(request, message, headers)
    if (mismatch || !this.fastPath.takes(request, message, session))
      return { session, message: mismatch ?? message, request }
    if (request.method === 'tools/list') return write(res, this.fastPath.list(request.era!, message.id, view))
    // the client going away cancels the call; an answer already written makes this a no-op
    const cancel = new CallCancel()
    res.once('close', () => {
      // a plain Error as the abort reason: the SDK sends String(reason) upstream ('Error: …'), and a cancelled call's
      // answer gets the connector's name only for an error that is not a TuttiError (tool-service.ts)
      if (!res.writableFinished) cancel.cancel(new Error('the client went away'))
    })
    const answer = await this.fastPath.call(request.era!, request, message, session, cancel)
    if ('body' in answer) return write(res, answer)
    return { session, message, request, settled: answer }
  }

  /** As the h3 app's onError answers: logged, a 500 if nothing was written yet. */
  private failed(res: ServerResponse, err: unknown): void {
    this.log.error('http handler failed', { error: err })
    if (res.headersSent) {
      res.destroy()
      return
    }
    const body = JSON.stringify({ error: { code: ErrorCodes.INTERNAL, message: 'internal error' } })
    res.writeHead(500, { 'content-length': String(Buffer.byteLength(body)), 'content-type': 'application/json' })
    res.end(body)
  }
}

/** Straight to node's response: head and body in one write (node corks the socket for the tick). */
function write(res: ServerResponse, answer: FastAnswer): undefined {
  res.writeHead(200, answer.headers)
  if (typeof answer.body === 'string') res.end(answer.body)
  else {
    for (const chunk of answer.body) res.write(chunk)
    res.end()
  }
  return undefined
}
