import { ProtocolError, ProtocolErrorCode, type Client } from '@modelcontextprotocol/client'
import { META, TASKS_EXTENSION_ID } from '../mcp-wire.js'
import { UpstreamInputRequired } from '../registry/call-relay.js'
import type { RouteCallOptions } from '../registry/route.js'
import type { DetailedTask, TaskAnswer, TaskCallAnswer, TaskRequest, TaskStatus } from '../registry/tasks.js'
import { UPSTREAM_CLIENT_CAPABILITIES } from './call-relays.js'
import { AS_SENT, isObject, STATUSES, taskNotFound, withoutRelatedTask } from './upstream-tasks.js'

/**
 * The tasks of an upstream that declared the `io.modelcontextprotocol/tasks`
 * extension (SEP-2663): the wire tutti serves its own callers, so it is
 * passed through, checked but not translated. Each request declares the
 * extension in its `_meta` clientCapabilities (the per-request opt-in of
 * SEP-2575), beside what the caller can answer; the SDK server lifts that
 * key on a 2025-06-18 stdio connection too, so the upstream makes tasks
 * there as well. An input_required task's requests pass through under the
 * upstream's own keys, and tasks/update takes the caller's answers to them.
 */

/** Sends one request as `relay`'s (its progress, its requests back): CallRelays.track, with the meta it makes. */
export type Tracked = <T>(
  options: RouteCallOptions,
  request: (meta?: Record<string, unknown>) => Promise<T>,
) => Promise<T>

/** Whether an upstream's capabilities declare the extension (then it speaks SEP-2663, not SEP-1686). */
export function declaresTasksExtension(capabilities: unknown): boolean {
  const extensions = isObject(capabilities) ? capabilities.extensions : undefined
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION_ID])
}

/**
 * Whether tutti relays the extension's tasks on this link: the upstream
 * declares it. On a 2026-07-28 link they go by raw requests
 * (raw-requests.ts): the SDK client's codec there refuses every resultType
 * but `complete` and `input_required` ("Unsupported result type 'task'",
 * typescript-sdk#2637), explicit result schema or not.
 */
export function relaysExtensionTasks(client: Pick<Client, 'getServerCapabilities'>): boolean {
  return declaresTasksExtension(client.getServerCapabilities())
}

/** Sends one of the extension's requests and hands back its result as the upstream sent it. */
export type TaskWire = (
  method: string,
  params: Record<string, unknown>,
  options: { signal?: AbortSignal; timeout: number },
) => Promise<unknown>

/** The SDK client's request, for a 2025 link: what the upstream answered, unchecked (AS_SENT). */
export function sdkTaskWire(client: Client): TaskWire {
  return (method, params, options) => client.request({ method, params } as never, AS_SENT, options)
}

export class ExtensionTasks {
  constructor(
    private readonly wire: TaskWire,
    /** A 2026-07-28 link: its input_required rounds pass through to a caller that answers rounds itself. */
    private readonly modern: boolean,
    private readonly key: string,
    readonly epoch: string,
    private readonly timeoutMs: number,
    private readonly tracked: Tracked,
  ) {}

  /** tools/call from a caller that takes tasks: the upstream decides whether it makes one (server-directed). */
  async call(name: string, args: Record<string, unknown> | undefined, options: RouteCallOptions) {
    const rounds = this.modern ? options.relay?.rounds : undefined
    const params = { name, ...(args === undefined ? {} : { arguments: args }), ...rounds }
    const raw = await this.send('tools/call', params, options)
    // before it makes a task, the upstream may ask the caller (SEP-2663 over SEP-2322): a round of its own
    if (raw.resultType === 'input_required' && rounds) {
      const requests = isObject(raw.inputRequests) ? raw.inputRequests : {}
      throw new UpstreamInputRequired(requests, typeof raw.requestState === 'string' ? raw.requestState : undefined)
    }
    if (isCreateTaskResult(raw)) return { kind: 'task', task: this.taskOf(raw), epoch: this.epoch } as TaskCallAnswer
    if (Array.isArray(raw.content) && (raw.resultType === undefined || raw.resultType === 'complete')) {
      // tutti's server sets the caller's resultType itself
      const { resultType: _, ...result } = raw
      return { kind: 'result', result } as TaskCallAnswer
    }
    throw this.malformed(`tools/call was answered with resultType ${JSON.stringify(raw.resultType)} and no content`)
  }

  async request(request: TaskRequest, options: RouteCallOptions): Promise<TaskAnswer> {
    if (request.epoch !== this.epoch) throw taskNotFound()
    const { taskId } = request
    if (request.method === 'tasks/get') {
      const task = this.taskOf(await this.send('tasks/get', { taskId }, options))
      if (task.taskId !== taskId) throw this.malformed(`tasks/get of "${taskId}" answered task "${task.taskId}"`)
      return task
    }
    const params = request.method === 'tasks/update' ? { taskId, inputResponses: request.inputResponses } : { taskId }
    await this.send(request.method, params, options)
    return {}
  }

  private async send(method: string, params: Record<string, unknown>, options: RouteCallOptions) {
    const sent = { signal: options.signal, timeout: this.timeoutMs }
    const raw: unknown = await this.tracked(options, (meta) => {
      const declared = (meta?.[META.clientCapabilities] as Record<string, unknown> | undefined) ?? {
        ...UPSTREAM_CLIENT_CAPABILITIES,
      }
      const extensions = { ...(declared.extensions as object | undefined), [TASKS_EXTENSION_ID]: {} }
      const capabilities = { ...declared, extensions }
      const _meta = { ...(params._meta as object | undefined), ...meta, [META.clientCapabilities]: capabilities }
      return this.wire(method, { ...params, _meta }, sent)
    })
    if (!isObject(raw)) throw this.malformed(`${method} was answered with something other than an object`)
    return raw
  }

  /** A CreateTaskResult or DetailedTask as the extension shapes it; what a caller must not see is left out. */
  private taskOf(raw: Record<string, unknown>): DetailedTask {
    if (typeof raw.taskId !== 'string' || !STATUSES.has(raw.status as TaskStatus))
      throw this.malformed('a task without a taskId or a known status')
    const created = typeof raw.createdAt === 'string' ? raw.createdAt : new Date().toISOString()
    const ttl = raw.ttlMs
    const task: DetailedTask = {
      taskId: raw.taskId,
      status: raw.status as TaskStatus,
      createdAt: created,
      lastUpdatedAt: typeof raw.lastUpdatedAt === 'string' ? raw.lastUpdatedAt : created,
      ttlMs: typeof ttl === 'number' && ttl > 0 ? Math.round(ttl) : null,
    }
    if (typeof raw.statusMessage === 'string') task.statusMessage = raw.statusMessage
    if (typeof raw.pollIntervalMs === 'number' && raw.pollIntervalMs > 0)
      task.pollIntervalMs = Math.max(1, Math.round(raw.pollIntervalMs))
    if (task.status === 'input_required' && isObject(raw.inputRequests)) task.inputRequests = raw.inputRequests
    if (task.status === 'completed' && isObject(raw.result)) {
      const { resultType: _, ...result } = withoutRelatedTask(raw.result)
      task.result = result
    }
    if (task.status === 'failed') task.error = errorOf(raw.error)
    return task
  }

  private malformed(what: string): ProtocolError {
    return new ProtocolError(ProtocolErrorCode.InternalError, `connector "${this.key}": the upstream's task: ${what}`)
  }
}

/**
 * A CreateTaskResult: `resultType: "task"`, or, from the SDK server on a
 * 2025 connection (whose results have no resultType), a flat task with the
 * empty `content` that encoding adds; a tool's own result has no top-level
 * taskId and status.
 */
function isCreateTaskResult(raw: Record<string, unknown>): boolean {
  if (raw.resultType === 'task') return true
  return raw.resultType === undefined && typeof raw.taskId === 'string' && STATUSES.has(raw.status as TaskStatus)
}

/** A failed task's JSON-RPC error as the upstream gave it; one without a usable error is an internal error. */
function errorOf(raw: unknown): NonNullable<DetailedTask['error']> {
  if (isObject(raw) && typeof raw.code === 'number' && typeof raw.message === 'string')
    return { code: raw.code, message: raw.message, ...(raw.data === undefined ? {} : { data: raw.data }) }
  return { code: ProtocolErrorCode.InternalError, message: 'the task failed' }
}
