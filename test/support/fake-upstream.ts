import type { RelayResult, ToolCallResult, UpstreamTool } from '../../src/runtime/registry/route.js'
import type { UpstreamTable } from '../../src/runtime/registry/route.js'
import type { RelayMethod } from '../../src/runtime/registry/surface.js'
import type { DetailedTask, RouteTasks, TaskStatus } from '../../src/runtime/registry/tasks.js'
import type { OpenUpstream, UpstreamLink } from '../../src/runtime/upstream/upstream-supervisor.js'
import type { UpstreamSpec } from '../../src/runtime/upstream/upstream-spec.js'

/** An in-memory upstream session: the test decides its tools, answers, exits and list changes. */
export class FakeLink implements UpstreamLink {
  closed = false
  closedWith?: number
  readonly calls: Array<{ name: string; args: unknown }> = []
  listCount = 0
  private readonly closeListeners: Array<(reason: string) => void> = []
  private readonly changeListeners: Array<() => void> = []

  constructor(
    public tools: UpstreamTool[],
    readonly pid = 1000 + Math.floor(Math.random() * 1000),
  ) {}

  async listTools(): Promise<UpstreamTool[]> {
    this.listCount++
    return this.tools
  }

  /** Tools alone, unless a test gives the rest of a table (`surface`). */
  surface: Omit<UpstreamTable, 'tools'> = {}
  readonly relayed: Array<{ method: RelayMethod; params: Record<string, unknown> }> = []

  async listTable(): Promise<{ table: UpstreamTable; problems: string[] }> {
    return { table: { tools: await this.listTools(), ...this.surface }, problems: [] }
  }

  async relay(method: RelayMethod, params: Record<string, unknown>): Promise<RelayResult> {
    if (this.closed) throw new Error('gone')
    this.relayed.push({ method, params })
    return { relayed: method, from: this.pid }
  }

  onResourceUpdated(): void {}

  /** Its tasks: each call makes one, working until the test sets another status here. */
  readonly taskStatus = new Map<string, TaskStatus>()
  private readonly taskCreated = new Map<string, string>()
  taskTtlMs: number | null = null
  readonly tasks: RouteTasks = {
    call: async () => {
      const taskId = `t${this.taskStatus.size + 1}`
      this.taskStatus.set(taskId, 'working')
      this.taskCreated.set(taskId, new Date().toISOString())
      return { kind: 'task', task: this.task(taskId), epoch: String(this.pid) }
    },
    request: async (request) => {
      if (this.closed) throw new Error('gone')
      if (!this.taskStatus.has(request.taskId) || request.epoch !== String(this.pid)) throw new Error('Task not found')
      return request.method === 'tasks/get' ? this.task(request.taskId) : {}
    },
  }

  private task(taskId: string): DetailedTask {
    const createdAt = this.taskCreated.get(taskId)!
    const status = this.taskStatus.get(taskId)!
    return { taskId, status, createdAt, lastUpdatedAt: new Date().toISOString(), ttlMs: this.taskTtlMs }
  }

  async callTool(name: string, args: Record<string, unknown> | undefined): Promise<ToolCallResult> {
    if (this.closed) throw new Error('gone')
    this.calls.push({ name, args })
    return { content: [{ type: 'text', text: `${name} from ${this.pid}` }] }
  }

  onClosed(listener: (reason: string) => void): void {
    this.closeListeners.push(listener)
  }

  onToolsChanged(listener: () => void): void {
    this.changeListeners.push(listener)
  }

  /**
   * Set: close() takes until it settles, as a real process's close grace does (closed is true at once, as the real
   * one's).
   */
  closeTakes?: Promise<void>

  async close(drainMs?: number): Promise<void> {
    this.closed = true
    this.closedWith = drainMs
    await this.closeTakes
  }

  /** The upstream process went away on its own. */
  exit(reason = 'exited with code 1'): void {
    this.closed = true
    for (const l of this.closeListeners) l(reason)
  }

  changeTools(tools: UpstreamTool[]): void {
    this.tools = tools
    for (const l of this.changeListeners) l()
  }
}

/** A dialer that hands out scripted links (or failures), and records every dial. */
export class FakeDialer {
  readonly links: FakeLink[] = []
  readonly specs: UpstreamSpec[] = []
  /** What the next dials do: a tool table, an Error to throw, or a promise the test settles. */
  readonly script: Array<UpstreamTool[] | Error | Promise<UpstreamTool[]>> = []
  fallback: UpstreamTool[] = []

  readonly open: OpenUpstream = async (spec, signal) => {
    this.specs.push(spec)
    const next = this.script.shift() ?? this.fallback
    if (next instanceof Error) throw next
    const tools = await (next instanceof Promise ? Promise.race([next, aborted(signal)]) : next)
    const link = new FakeLink(tools)
    this.links.push(link)
    return link
  }

  get last(): FakeLink {
    return this.links[this.links.length - 1]!
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error('the connect was abandoned')), { once: true }),
  )
}

export const tool = (name: string): UpstreamTool => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object' },
})
