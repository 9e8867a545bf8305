/**
 * Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) as a route
 * relays them: in the extension's own shapes, whatever an upstream speaks
 * (upstream/upstream-tasks.ts translates the 2025-11-25 task messages). Ids
 * here are the upstream's own; the connector server hands out its handles
 * (mcpserver/task-handles.ts).
 */

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled'])

/** A task as `tasks/get` answers it (SEP-2663 DetailedTask), with the upstream's own id. */
export interface DetailedTask {
  taskId: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  /** From creation, in integer ms; null: unlimited. */
  ttlMs: number | null
  pollIntervalMs?: number
  /** completed: the tool's result (even one with isError). */
  result?: Record<string, unknown>
  /** failed: the JSON-RPC error the call ended with. */
  error?: { code: number; message: string; data?: unknown }
  /** input_required: what the upstream waits for, by its own keys. */
  inputRequests?: Record<string, unknown>
}

/**
 * What a task-augmented tools/call got: a task of the connection `epoch`
 * (a restarted upstream is another epoch: its ids are not the old ones),
 * or the result at once (an upstream may finish before it makes a task).
 */
export type TaskCallAnswer =
  | { kind: 'task'; task: DetailedTask; epoch: string }
  | { kind: 'result'; result: Record<string, unknown> & { content: unknown[] } }

/** A request about one task, by the upstream's id and the epoch of the connection that made it. */
export type TaskRequest =
  | { method: 'tasks/get'; taskId: string; epoch: string }
  | { method: 'tasks/cancel'; taskId: string; epoch: string }
  | { method: 'tasks/update'; taskId: string; epoch: string; inputResponses: Record<string, unknown> }

/** tasks/get answers the task; tasks/cancel and tasks/update an empty acknowledgement. */
export type TaskAnswer = DetailedTask | Record<string, never>

/** How a caller may end a request early (route.ts's RouteCallOptions, without the import cycle). */
interface TaskCallOptions {
  signal?: AbortSignal
}

/** An upstream's tasks, as a route relays them. */
export interface RouteTasks {
  /** A tools/call the upstream may answer with a task. */
  call(
    upstreamName: string,
    args: Record<string, unknown> | undefined,
    options: TaskCallOptions,
  ): Promise<TaskCallAnswer>
  /** tasks/get, tasks/cancel or tasks/update of one of its tasks. */
  request(request: TaskRequest, options: TaskCallOptions): Promise<TaskAnswer>
}

/** How a tool takes tasks, from its upstream's `execution.taskSupport` (absent: never). */
export type TaskSupport = 'optional' | 'required'

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.has(status)
}

/** A tool's `execution` as an upstream that serves tasks listed it: how it takes them, if at all. */
export function taskSupportOf(execution: unknown): TaskSupport | undefined {
  const support = (execution as { taskSupport?: unknown } | undefined)?.taskSupport
  return support === 'optional' || support === 'required' ? support : undefined
}
