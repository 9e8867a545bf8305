import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import type { ConnectorMCPRegistry } from '../registry/connector-mcp-registry.js'
import { UpstreamInputRequired } from '../registry/call-relay.js'
import { publishedContent } from '../registry/published-content.js'
import type { MCPToolBinding, RouteCallOptions, ToolCallResult } from '../registry/route.js'
import { isTerminal, type DetailedTask, type RouteTasks, type TaskRequest } from '../registry/tasks.js'
import type { SessionView } from '../sessions/session-view.js'
import { MAX_UPSTREAM_TASK_ID, TaskHandles, type TaskRef } from './task-handles.js'
import { asProtocolError, withoutUpstreamIdentity } from './tool-service.js'

/** A driven task's polls (legacy callers, see `driven`) are spaced by its pollIntervalMs, within these bounds. */
export const POLL_BOUNDS_MS = { min: 250, max: 5_000, otherwise: 1_000 } as const

/** How long a task without a TTL is driven for a 2025-06-18 caller: as long as a tool call may take by default. */
export const DRIVEN_TASK_MS = 10 * 60_000

/** The extension's error for a task id this session cannot reach (SEP-2663: -32602, as for one never made). */
export function taskNotFound(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found')
}

/**
 * The tasks of the connector server (the `io.modelcontextprotocol/tasks`
 * extension, SEP-2663), made by the upstreams that run them and reached
 * through their routes: a handle (task-handles.ts) names the connector and
 * the upstream's own id, and opens only for the session that made it, and
 * only while that session's view sees the connector. tasks-extension.ts
 * serves them on the per-request server.
 */
export class TaskService {
  constructor(
    private readonly registry: ConnectorMCPRegistry,
    readonly handles = new TaskHandles(),
  ) {}

  /** tools/call of a tool that takes tasks, for a client that declared the extension: its task, or its result. */
  async create(
    binding: MCPToolBinding,
    args: Record<string, unknown> | undefined,
    session: string,
    options: RouteCallOptions,
  ): Promise<Record<string, unknown>> {
    const answer = await relayed(binding.connectorKey, () => {
      this.registry.assertDispatchable(binding)
      return tasksOf(binding).call(binding.tool.upstreamName, args, options)
    })
    if (answer.kind === 'result') return publishedContent(binding.connectorKey, withoutUpstreamIdentity(answer.result))
    if (answer.task.taskId.length > MAX_UPSTREAM_TASK_ID)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `connector "${binding.connectorKey}": the upstream's task id is longer than ${MAX_UPSTREAM_TASK_ID} chars`,
      )
    const ref = { connector: binding.connectorKey, epoch: answer.epoch, taskId: answer.task.taskId }
    return { ...this.served(session, ref, answer.task), resultType: 'task' }
  }

  async get(handle: string, session: string, view: SessionView, options: RouteCallOptions): Promise<DetailedTask> {
    const { ref, tasks } = this.open(handle, session, view)
    const task = await relayed(ref.connector, () => tasks.request({ method: 'tasks/get', ...ref }, options))
    return this.served(session, ref, task as DetailedTask)
  }

  /** tasks/cancel, or tasks/update with `inputResponses`: an empty acknowledgement. */
  async change(
    method: Exclude<TaskRequest['method'], 'tasks/get'>,
    params: { taskId: string; inputResponses?: Record<string, unknown> },
    session: string,
    view: SessionView,
    options: RouteCallOptions,
  ): Promise<Record<string, never>> {
    const { ref, tasks } = this.open(params.taskId, session, view)
    const inputResponses = params.inputResponses ?? {}
    const request = method === 'tasks/cancel' ? { method, ...ref } : { method, ...ref, inputResponses }
    await relayed(ref.connector, () => tasks.request(request, options))
    return {}
  }

  /**
   * The binding of a tool that must run as a task, for a caller that
   * cannot take one (2025-06-18 has no tasks): its calls make the task and
   * poll it to its end (at most its TTL, or DRIVEN_TASK_MS), answering
   * with its result as a plain call would. The call's cancel cancels the
   * task too.
   */
  driven(binding: MCPToolBinding): MCPToolBinding {
    const tasks = tasksOf(binding)
    const callTool = async (name: string, args: Record<string, unknown> | undefined, options: RouteCallOptions) => {
      const answer = await tasks.call(name, args, options)
      if (answer.kind === 'result') return answer.result
      let task = answer.task
      const ref = { taskId: task.taskId, epoch: answer.epoch }
      const started = Date.now()
      try {
        while (!isTerminal(task.status)) {
          if (Date.now() >= drivenUntil(task, started)) throw outlived(binding.connectorKey, task)
          await pause(task.pollIntervalMs, options.cancel ? options.cancel.signal : options.signal)
          task = (await tasks.request({ method: 'tasks/get', ...ref }, options)) as DetailedTask
        }
      } catch (err) {
        // the caller went away, the task outlived its bound, or a poll failed: the task is no longer wanted;
        // cancelling it is best effort (the caller gets `err` either way)
        void tasks.request({ method: 'tasks/cancel', ...ref }, {}).catch(() => undefined)
        throw err
      }
      return endOf(binding.connectorKey, task)
    }
    return { ...binding, client: { callTool } }
  }

  /** The task as this session sees it: the handle for the upstream's id, resources in its result named as served. */
  private served(session: string, ref: TaskRef, task: DetailedTask): DetailedTask {
    const served: DetailedTask = { ...task, taskId: this.handles.mint(session, ref) }
    if (task.result) served.result = publishedContent(ref.connector, withoutUpstreamIdentity(task.result))
    return served
  }

  /** Whether `session` can reach the task `handle` names (without asking its upstream). */
  reachable(handle: string, session: string, view: SessionView): boolean {
    try {
      this.open(handle, session, view)
      return true
    } catch {
      // taskNotFound: not this session's, or its connector is gone or out of its view
      return false
    }
  }

  /** The route of the task `handle` names, if this session made it and still sees its connector. */
  private open(handle: string, session: string, view: SessionView): { ref: TaskRef; tasks: RouteTasks } {
    const ref = this.handles.open(session, handle)
    const route = ref && view.connector(ref.connector) ? this.registry.route(ref.connector) : undefined
    if (!ref || !route?.client.tasks) throw taskNotFound()
    return { ref, tasks: route.client.tasks }
  }
}

/** An upstream's JSON-RPC error as it is; any other failure an internal error naming the connector (as calls). */
async function relayed<T>(connector: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    // an upstream's own round before it makes a task goes to the caller's rounds (input-rounds.ts) as it is
    if (err instanceof UpstreamInputRequired) throw err
    throw asProtocolError(err, connector)
  }
}

function tasksOf(binding: MCPToolBinding): RouteTasks {
  const { tasks } = binding.client
  if (tasks) return tasks
  throw new ProtocolError(ProtocolErrorCode.InternalError, `connector "${binding.connectorKey}" relays no tasks`)
}

/** How long tutti drives a task for a caller: its TTL (the upstream may drop it after), else DRIVEN_TASK_MS. */
function drivenUntil(task: DetailedTask, started: number): number {
  const created = Date.parse(task.createdAt)
  return task.ttlMs !== null && Number.isFinite(created) ? created + task.ttlMs : started + DRIVEN_TASK_MS
}

function outlived(connector: string, task: DetailedTask): ProtocolError {
  const message = `connector "${connector}": the task did not end within its time (still ${task.status})`
  return new ProtocolError(ProtocolErrorCode.InternalError, message)
}

/** A finished task as its call's answer: the result, or the call's error. */
function endOf(connector: string, task: DetailedTask): ToolCallResult {
  if (task.status === 'completed' && task.result) return task.result as ToolCallResult
  if (task.status === 'failed' && task.error)
    throw new ProtocolError(task.error.code, task.error.message, task.error.data)
  const why = task.statusMessage ? `: ${task.statusMessage}` : ''
  throw new ProtocolError(
    ProtocolErrorCode.InternalError,
    `connector "${connector}": the task ended ${task.status}${why}`,
  )
}

/** Waits a task's poll interval (within POLL_BOUNDS_MS), or until `signal` aborts (then throws its reason). */
export function pause(pollIntervalMs: number | undefined, signal?: AbortSignal): Promise<void> {
  const ms = Math.min(POLL_BOUNDS_MS.max, Math.max(POLL_BOUNDS_MS.min, pollIntervalMs ?? POLL_BOUNDS_MS.otherwise))
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer)
      const reason: unknown = signal!.reason
      reject(reason instanceof Error ? reason : new Error(String(reason)))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted)
      resolve()
    }, ms)
    if (signal?.aborted) aborted()
    else signal?.addEventListener('abort', aborted, { once: true })
  })
}
