import { spawn, type ChildProcess } from 'node:child_process'
import readline from 'node:readline'
import { EVENTUALLY_MS } from './eventually.js'

/** The ACP protocol version this client speaks (ACP's `initialize.protocolVersion` is an integer). */
export const ACP_PROTOCOL_VERSION = 1

/** One `session/request_permission` the agent asked, and the option the client chose. */
export interface PermissionAsked {
  sessionId: string
  toolCall: { toolCallId?: string; title?: string; rawInput?: unknown }
  chose: string
}

/**
 * The client side of the Agent Client Protocol over an agent's stdio:
 * newline-delimited JSON-RPC 2.0, requests both ways. It plays an editor
 * that lets the agent run what it asks (`session/request_permission` is
 * answered with the allow-once option) and offers no file system or
 * terminal of its own. `transcript` keeps every line either side wrote,
 * so a test can say which messages carried a secret.
 */
export class AcpClient {
  private nextId = 1
  private readonly pending = new Map<
    number,
    { method: string; resolve: (v: any) => void; reject: (e: Error) => void }
  >()
  private readonly wakers: Array<() => void> = []
  readonly stderr: string[] = []
  /** Every `session/update` notification, in order. */
  readonly updates: Array<{ sessionId: string; update: { sessionUpdate: string; [k: string]: unknown } }> = []
  readonly permissions: PermissionAsked[] = []
  /** Every line on the agent's stdin and stdout, in order, as written. */
  readonly transcript: Array<{ from: 'client' | 'agent'; line: string }> = []
  /** Sessions that session/new opened and session/close has not closed: `stop()` closes them first. */
  readonly openSessions = new Set<string>()
  readonly pid: number

  private constructor(private readonly child: ChildProcess) {
    this.pid = child.pid!
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      this.transcript.push({ from: 'agent', line })
      this.onLine(line)
    })
    child.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()))
    child.on('exit', () => {
      for (const [id, p] of this.pending) {
        this.pending.delete(id)
        p.reject(
          new Error(
            `the agent exited (${child.exitCode ?? child.signalCode}) before answering ${p.method}; ` +
              `stderr: ${this.stderrTail()}`,
          ),
        )
      }
      this.wake()
    })
  }

  static spawn(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): AcpClient {
    return new AcpClient(spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] }))
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null
  }

  /** How the agent ended: its exit code, or the signal that ended it; undefined while it runs. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exited ? { code: this.child.exitCode, signal: this.child.signalCode } : undefined
  }

  /** `initialize`: the whole JSON-RPC response, as an agent host would hand it to `tutti session prepare`. */
  async initialize(): Promise<{ jsonrpc: '2.0'; id: number; result: any }> {
    const params = {
      protocolVersion: ACP_PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'tutti-tests', title: 'tutti ACP test client', version: '1' },
    }
    const { id, result } = await this.exchange('initialize', params)
    return { jsonrpc: '2.0', id, result }
  }

  /** A request; resolves with its result, rejects with its error. */
  async request(method: string, params: any, ms = EVENTUALLY_MS): Promise<any> {
    const { result } = await this.exchange(method, params, ms)
    if (method === 'session/new' && typeof result?.sessionId === 'string') this.openSessions.add(result.sessionId)
    if (method === 'session/close') this.openSessions.delete(params?.sessionId)
    return result
  }

  /** The `session/update`s of one session so far, of one kind. */
  updatesOf(sessionId: string, kind: string): Array<Record<string, unknown>> {
    return this.updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === kind).map((u) => u.update)
  }

  /** Wait for an update of the session that `ok` accepts (the agent tells of some things only by notification). */
  async update(
    sessionId: string,
    ok: (u: Record<string, unknown>) => boolean,
    ms = EVENTUALLY_MS,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms
    for (;;) {
      const found = this.updates.find((u) => u.sessionId === sessionId && ok(u.update))
      if (found) return found.update
      if (this.exited) throw new Error(`the agent exited before the update; stderr: ${this.stderrTail()}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no such session/update within ${ms} ms; stderr: ${this.stderrTail()}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wakers.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /**
   * What an editor does when it is done: `session/close` for each open
   * session (an agent keeps running while a session's own process lives),
   * then the end of the agent's input. SIGKILL (our own child) if it does
   * not go; a session's process would then be left behind.
   */
  async stop(ms = 10_000): Promise<void> {
    if (this.exited) return
    for (const sessionId of [...this.openSessions])
      await this.request('session/close', { sessionId }, ms).catch(() => undefined)
    this.child.stdin!.end()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.child.kill('SIGKILL'), ms)
      this.child.once('exit', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  stderrTail(): string {
    return this.stderr.join('').slice(-3000)
  }

  private exchange(method: string, params: unknown, ms = EVENTUALLY_MS): Promise<{ id: number; result: any }> {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new Error(`ACP ${method}: no answer within ${ms} ms; stderr: ${this.stderrTail()}`))
      }, ms)
      this.pending.set(id, {
        method,
        resolve: (result) => {
          clearTimeout(timer)
          resolve({ id, result })
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        },
      })
      this.write({ jsonrpc: '2.0', id, method, params })
    })
  }

  private write(message: unknown): void {
    if (this.exited) return
    const line = JSON.stringify(message)
    this.transcript.push({ from: 'client', line })
    this.child.stdin!.write(`${line}\n`)
  }

  private onLine(line: string): void {
    let msg: any
    try {
      msg = JSON.parse(line)
    } catch {
      return
    }
    if (typeof msg.method === 'string') this.onAgentMessage(msg)
    else if (typeof msg.id === 'number' && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id)!
      this.pending.delete(msg.id)
      if (msg.error) {
        const data = msg.error.data ? ` ${JSON.stringify(msg.error.data)}` : ''
        p.reject(new Error(`ACP ${p.method}: ${msg.error.code} ${msg.error.message}${data}`))
      } else p.resolve(msg.result)
    }
    this.wake()
  }

  /** A request or notification from the agent. */
  private onAgentMessage(msg: { id?: number | string; method: string; params?: any }): void {
    if (msg.method === 'session/update') {
      this.updates.push({ sessionId: msg.params?.sessionId, update: msg.params?.update ?? {} })
      return
    }
    if (msg.id === undefined) return // another notification: nothing to answer
    if (msg.method === 'session/request_permission') {
      const options: Array<{ optionId: string; kind: string }> = msg.params?.options ?? []
      const allow = options.find((o) => o.kind === 'allow_once') ?? options.find((o) => o.kind === 'allow_always')
      this.permissions.push({
        sessionId: msg.params?.sessionId,
        toolCall: msg.params?.toolCall ?? {},
        chose: allow?.optionId ?? 'cancelled',
      })
      this.write({
        jsonrpc: '2.0',
        id: msg.id,
        result: { outcome: allow ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' } },
      })
      return
    }
    // the client declared no fs or terminal capability: anything else is not offered
    this.write({
      jsonrpc: '2.0',
      id: msg.id,
      error: { code: -32601, message: `the test client does not offer ${msg.method}` },
    })
  }

  private wake(): void {
    for (const w of this.wakers.splice(0)) w()
  }
}
