import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { EVENTUALLY_MS } from '../eventually.js'

/** One HTTP request as the fake received it: every request is kept, whatever its path. */
export interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: any
}

/** A model request held open until the test answers it. */
export interface Exchange<A> {
  /** 1-based, in arrival order among model requests. */
  readonly index: number
  readonly request: RecordedRequest
  reply(answer: A): void
}

/** How a vendor's API is played: which requests are model turns, how an answer is written, what else is answered. */
export interface ModelApiDialect<A> {
  name: string
  isModelRequest(req: RecordedRequest): boolean
  writeAnswer(req: RecordedRequest, answer: A, res: http.ServerResponse, index: number): void
  /** Requests that are neither model turns nor unknown (token counting…); undefined: 404. */
  answerOther?(req: RecordedRequest, res: http.ServerResponse): boolean
}

/**
 * A model API on loopback for real agents: it records every request and holds
 * each model request until the test answers it (`next()`), so a test decides
 * what happens between one model request and the next. `autoReply` answers
 * model requests the test does not script (an agent's side requests).
 */
export class FakeModelApi<A> {
  readonly requests: RecordedRequest[] = []
  private readonly exchanges: Array<Exchange<A>> = []
  /** Arrived, not auto-answered, not yet handed out by next(). */
  private readonly pending: Array<Exchange<A>> = []
  private readonly answered = new Set<number>()
  private readonly waiters: Array<() => void> = []
  private server?: http.Server
  autoReply?: (req: RecordedRequest) => A | undefined

  constructor(private readonly dialect: ModelApiDialect<A>) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.onRequest(req, res))
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    return this
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port
  }

  /** The origin, for ANTHROPIC_BASE_URL or a Codex provider's base_url (plus /v1). */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Model requests so far (answered or not). */
  get modelRequests(): RecordedRequest[] {
    return this.exchanges.map((e) => e.request)
  }

  /**
   * The next model request not yet taken, in arrival order: resolves once it has
   * arrived. The bound only decides how long a broken agent takes to fail.
   */
  async next(ms = EVENTUALLY_MS): Promise<Exchange<A>> {
    const deadline = Date.now() + ms
    while (this.pending.length === 0) {
      const left = deadline - Date.now()
      if (left <= 0) {
        const seen = this.requests.map((r) => `${r.method} ${r.path}`).join(', ') || 'none'
        throw new Error(
          `${this.dialect.name}: model request ${this.exchanges.length + 1} did not arrive within ${ms} ms ` +
            `(requests so far: ${seen})`,
        )
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    return this.pending.shift()!
  }

  /**
   * Answers every model request not answered yet (taken by a test that
   * failed before it replied, or never taken), so the agent moves on and the
   * next test meets its own requests. Returns how many there were.
   */
  answerUnanswered(answer: A): number {
    const open = this.exchanges.filter((e) => !this.answered.has(e.index))
    this.pending.splice(0)
    for (const e of open) e.reply(answer)
    return open.length
  }

  async close(): Promise<void> {
    if (!this.server) return
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server!.close(() => resolve()))
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        // kept as text
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      this.requests.push(recorded)
      if (!this.dialect.isModelRequest(recorded)) {
        if (this.dialect.answerOther?.(recorded, res)) return
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            type: 'error',
            error: {
              type: 'not_found_error',
              message: `the fake ${this.dialect.name} does not serve ${recorded.method} ${recorded.path}`,
            },
          }),
        )
        return
      }
      const index = this.exchanges.length + 1
      const exchange: Exchange<A> = {
        index,
        request: recorded,
        reply: (answer) => {
          if (this.answered.has(index))
            throw new Error(`${this.dialect.name}: model request ${index} was answered twice`)
          this.answered.add(index)
          this.dialect.writeAnswer(recorded, answer, res, index)
        },
      }
      this.exchanges.push(exchange)
      const auto = this.autoReply?.(recorded)
      // an auto-answered request is never handed to next()
      if (auto !== undefined) return exchange.reply(auto)
      this.pending.push(exchange)
      for (const wake of this.waiters.splice(0)) wake()
    })
  }
}

/** Every text of a model request, for "does the model see X" (system, messages, tools). */
export function requestText(req: RecordedRequest): string {
  return typeof req.body === 'string' ? req.body : JSON.stringify(req.body)
}
