import { spawn, type ChildProcess } from 'node:child_process'
import readline from 'node:readline'
import { EVENTUALLY_MS } from './eventually.js'

/**
 * What a Claude Code session reports about one MCP server (`mcp_status`), without its config (which holds the expanded
 * token).
 */
export interface McpServerStatus {
  name: string
  status: string
  tools: string[]
}

/** The flags that make `claude -p` one long session driven over stdio (what the Agent SDK does). */
export const STREAM_FLAGS = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose']

/**
 * One Claude Code session over its stream-json protocol: user turns in,
 * events out, and control requests (`mcp_status`) answered from the running
 * session. One process serves a whole test file, since Claude Code is heavy
 * to start. Nothing of stdout is kept verbatim: a control answer may carry
 * the MCP config with the token expanded, so only what the tests need is kept.
 */
export class ClaudeStream {
  private nextId = 1
  private readonly controls = new Map<string, (response: any) => void>()
  private readonly results: any[] = []
  private resultsTaken = 0
  private readonly wakers: Array<() => void> = []
  readonly stderr: string[] = []
  /** Pids the session ran as (the agent itself, or the launcher in front of it). */
  readonly pid: number

  private constructor(private readonly child: ChildProcess) {
    this.pid = child.pid!
    readline.createInterface({ input: child.stdout! }).on('line', (line) => this.onLine(line))
    child.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()))
    child.on('exit', () => this.wake())
  }

  static async start(
    command: string,
    args: string[],
    options: { env: NodeJS.ProcessEnv; cwd: string },
  ): Promise<ClaudeStream> {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    const session = new ClaudeStream(child)
    await session.control('initialize', {})
    return session
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null
  }

  /** One user turn; the turn's model requests go to the fake, its end is `nextResult()`. */
  send(text: string): void {
    this.write({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' })
  }

  /** The `result` event that ends the next turn not yet awaited. */
  async nextResult(ms = EVENTUALLY_MS): Promise<{ subtype: string; is_error: boolean; result?: string }> {
    await this.until(() => this.results.length > this.resultsTaken, ms, 'a turn result')
    return this.results[this.resultsTaken++]
  }

  /** The session's own view of its MCP servers and their tools, at this moment. */
  async mcpStatus(): Promise<McpServerStatus[]> {
    const res = await this.control('mcp_status', {})
    return (res.mcpServers ?? []).map((s: { name: string; status: string; tools?: Array<{ name: string }> }) => ({
      name: s.name,
      status: s.status,
      tools: (s.tools ?? []).map((t) => t.name),
    }))
  }

  async stop(): Promise<void> {
    if (this.exited) return
    this.child.stdin!.end()
    await this.until(() => this.exited, 10_000, 'the session to exit').catch(() => {
      // it ignored the end of its input: the child is ours, started above
      this.child.kill('SIGKILL')
    })
  }

  private async control(subtype: string, request: Record<string, unknown>, ms = EVENTUALLY_MS): Promise<any> {
    const id = `req_${this.nextId++}`
    let answer: any
    this.controls.set(id, (r) => (answer = r))
    this.write({ type: 'control_request', request_id: id, request: { subtype, ...request } })
    await this.until(() => answer !== undefined, ms, `the answer to ${subtype}`)
    if (answer.subtype !== 'success') throw new Error(`claude ${subtype}: ${answer.error ?? 'failed'}`)
    return answer.response ?? {}
  }

  private write(message: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(message)}\n`)
  }

  private onLine(line: string): void {
    let msg: any
    try {
      msg = JSON.parse(line)
    } catch {
      return
    }
    if (msg.type === 'control_response' && this.controls.has(msg.response?.request_id)) {
      const resolve = this.controls.get(msg.response.request_id)!
      this.controls.delete(msg.response.request_id)
      resolve(msg.response)
    } else if (msg.type === 'result')
      this.results.push({ subtype: msg.subtype, is_error: msg.is_error, result: msg.result })
    this.wake()
  }

  private wake(): void {
    for (const w of this.wakers.splice(0)) w()
  }

  private async until(ok: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms
    while (!ok()) {
      if (this.exited && !ok()) {
        const exit = this.child.exitCode ?? this.child.signalCode
        throw new Error(`claude exited (${exit}) before ${what}; stderr: ${this.stderr.join('').slice(-2000)}`)
      }
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`claude: no ${what} within ${ms} ms; stderr: ${this.stderr.join('').slice(-2000)}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wakers.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }
}
