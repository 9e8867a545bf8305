import type { ServerResponse } from 'node:http'
import { jsonRpcError, JSONRPC } from '../http-surface/error-response.js'

type NodeBackedRequest = Request & { runtime?: { node?: { res?: unknown } } }

/**
 * The MCP requests each session (by token hash) has in flight: from the
 * moment its token is verified until its response is done (written, or the
 * client gone), a listen stream for as long as it is open. Past the cap a
 * request is refused before its body is read, so that one client that
 * sends and never reads holds at most that many bodies, sockets and
 * answers in the daemon.
 */
export class SessionRequests {
  private readonly open = new Map<string, number>()

  constructor(readonly cap: number) {}

  /** Counted until `res` closes; false: the session has `cap` in flight already. */
  admit(session: string, res: ServerResponse): boolean {
    const n = this.open.get(session) ?? 0
    if (n >= this.cap) return false
    this.open.set(session, n + 1)
    res.once('close', () => this.leave(session))
    return true
  }

  /**
   * The h3 path's request: counted through the node response behind it.
   * One served in-process (no node response: the tests' in-process fetch)
   * has no end to wait for, and is not counted.
   */
  admitWeb(session: string, req: Request): boolean {
    const res = (req as NodeBackedRequest).runtime?.node?.res as ServerResponse | undefined
    return res ? this.admit(session, res) : true
  }

  /** The answer to a request past the cap; it names the cap (its body was not read, so the id is unknown). */
  refusal(): Response {
    const why = `this session has ${this.cap} MCP requests in flight, the most the daemon serves for one session`
    const message = `Too Many Requests: ${why}; send more as answers come back`
    return jsonRpcError(429, JSONRPC.SERVER_ERROR, message, null, { limit: 'mcpRequestsPerSession', max: this.cap })
  }

  private leave(session: string): void {
    const n = (this.open.get(session) ?? 1) - 1
    if (n > 0) this.open.set(session, n)
    else this.open.delete(session)
  }
}
