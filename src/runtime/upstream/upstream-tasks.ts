import { ProtocolError, ProtocolErrorCode, type Client } from '@modelcontextprotocol/client'
import { META } from '../mcp-wire.js'
import type { RouteCallOptions } from '../registry/route.js'
import type { DetailedTask, TaskAnswer, TaskCallAnswer, TaskRequest, TaskStatus } from '../registry/tasks.js'

/**
 * The tasks of one upstream connection, spoken in the 2025-11-25 wire
 * (SEP-1686: `task` on tools/call, a nested `task` in the answer, `ttl`,
 * `pollInterval`, the result fetched with tasks/result) and answered in
 * the extension's shapes (SEP-2663: flat, `ttlMs`, `pollIntervalMs`, the
 * result inlined in tasks/get). That is the wire the upstreams on hand
 * speak (`@modelcontextprotocol/server-everything`, SDK v1's task store);
 * an upstream that declares the extension gets its own wire instead
 * (extension-tasks.ts). A task of another connection (`epoch`) is
 * not found: a restarted upstream's ids are not the old one's.
 */

/**
 * Every result as it came: the SDK client's result schemas have no
 * 2025-11-25 task result for tools/call (it refuses `{ task }`), nor the
 * tasks/* methods; the shapes are checked here instead.
 */
export const AS_SENT = {
  '~standard': { version: 1 as const, vendor: 'tutti', validate: (value: unknown) => ({ value }) },
}

export const STATUSES = new Set<TaskStatus>(['working', 'input_required', 'completed', 'failed', 'cancelled'])

export const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** The extension's error for a task id nobody can reach (SEP-2663: -32602). */
export function taskNotFound(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found')
}

export class UpstreamTasks {
  constructor(
    private readonly client: Client,
    private readonly key: string,
    readonly epoch: string,
    private readonly timeoutMs: number,
  ) {}

  /** tools/call asking for a task: the task, or the result of an upstream that finished at once. */
  async call(name: string, args: Record<string, unknown> | undefined, options: RouteCallOptions) {
    const params = { name, ...(args === undefined ? {} : { arguments: args }), task: {} }
    const raw = await this.send('tools/call', params, options)
    if (isObject(raw.task)) return { kind: 'task', task: this.taskOf(raw.task), epoch: this.epoch } as TaskCallAnswer
    if (Array.isArray(raw.content)) return { kind: 'result', result: raw } as TaskCallAnswer
    throw this.malformed('a task-augmented tools/call was answered with neither a task nor a result')
  }

  async request(request: TaskRequest, options: RouteCallOptions): Promise<TaskAnswer> {
    if (request.epoch !== this.epoch) throw taskNotFound()
    const { taskId } = request
    if (request.method === 'tasks/get') return this.get(taskId, options)
    if (request.method === 'tasks/update') {
      // 2025-11-25 has no tasks/update: tutti surfaces no input request of such an upstream, so no key is
      // outstanding, and the extension has a server ignore answers to keys that are not; a known task is acked
      await this.get(taskId, options)
      return {}
    }
    try {
      await this.send('tasks/cancel', { taskId }, options)
    } catch (err) {
      // 2025-11-25 refuses to cancel a finished task (-32602); the extension acks it all the same, and keeps
      // -32602 for ids it does not know, which tasks/get tells apart
      if (!(err instanceof ProtocolError) || err.code !== ProtocolErrorCode.InvalidParams) throw err
      await this.get(taskId, options)
    }
    return {}
  }

  /** The task, with the result (or the error) of a finished one inlined, as tasks/get answers it. */
  private async get(taskId: string, options: RouteCallOptions): Promise<DetailedTask> {
    const task = this.taskOf(await this.send('tasks/get', { taskId }, options))
    if (task.taskId !== taskId) throw this.malformed(`tasks/get of "${taskId}" answered task "${task.taskId}"`)
    // its input requests travel on the tasks/result stream of 2025-11-25, which tutti does not relay
    if (task.status === 'input_required') return { ...task, inputRequests: {} }
    if (task.status !== 'completed' && task.status !== 'failed') return task
    let payload: Record<string, unknown>
    try {
      payload = await this.send('tasks/result', { taskId }, options)
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err
      // the JSON-RPC error the call ended with: the extension's `failed` (a completed task without its result is one)
      const error = { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) }
      return { ...task, status: 'failed', error }
    }
    if (task.status === 'completed') return { ...task, result: withoutRelatedTask(payload) }
    // failed without a JSON-RPC error to show: what the status message says is all there is
    return {
      ...task,
      error: { code: ProtocolErrorCode.InternalError, message: task.statusMessage ?? 'the task failed' },
    }
  }

  private async send(method: string, params: Record<string, unknown>, options: RouteCallOptions) {
    const sent = { signal: options.signal, timeout: this.timeoutMs }
    const raw: unknown = await this.client.request({ method, params } as never, AS_SENT, sent)
    if (!isObject(raw)) throw this.malformed(`${method} was answered with something other than an object`)
    return raw
  }

  /** A 2025-11-25 Task in the extension's shape: durations renamed, in integer ms. */
  private taskOf(raw: unknown): DetailedTask {
    if (!isObject(raw) || typeof raw.taskId !== 'string' || !STATUSES.has(raw.status as TaskStatus))
      throw this.malformed('a task without a taskId or a known status')
    const created = typeof raw.createdAt === 'string' ? raw.createdAt : new Date().toISOString()
    const task: DetailedTask = {
      taskId: raw.taskId,
      status: raw.status as TaskStatus,
      createdAt: created,
      lastUpdatedAt: typeof raw.lastUpdatedAt === 'string' ? raw.lastUpdatedAt : created,
      ttlMs: typeof raw.ttl === 'number' && raw.ttl > 0 ? Math.round(raw.ttl) : null,
    }
    if (typeof raw.statusMessage === 'string') task.statusMessage = raw.statusMessage
    if (typeof raw.pollInterval === 'number' && raw.pollInterval > 0)
      task.pollIntervalMs = Math.max(1, Math.round(raw.pollInterval))
    return task
  }

  private malformed(what: string): ProtocolError {
    return new ProtocolError(ProtocolErrorCode.InternalError, `connector "${this.key}": the upstream's task: ${what}`)
  }
}

/** The 2025-11-25 related-task `_meta` key: tasks/get already names the task (SEP-2663 forbids it inlined). */
export function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta
  if (!isObject(meta) || !(META.relatedTask in meta)) return result
  const { [META.relatedTask]: _task, ...rest } = meta
  const { _meta: _old, ...body } = result
  return Object.keys(rest).length ? { ...body, _meta: rest } : body
}
