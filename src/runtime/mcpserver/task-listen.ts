import { JSONRPC, jsonRpcError } from '../http-surface/error-response.js'
import type { Logger } from '../log/logger.js'
import { META } from '../mcp-wire.js'
import { isTerminal, type DetailedTask } from '../registry/tasks.js'
import type { SessionView } from '../sessions/session-view.js'
import { pause, type TaskService } from './task-service.js'
import { declaresTasks, tasksRequired } from './tasks-extension.js'

/** Task ids one listen stream may follow; past it, the rest are not honored (the acknowledgement lists those it is). */
export const MAX_LISTEN_TASKS = 100

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** The filter fields the SDK's listen router honors itself. */
const CORE_FIELDS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged', 'resourceSubscriptions']

/**
 * `taskIds` on `subscriptions/listen` (the tasks extension, SEP-2663): a
 * client names the tasks it wants `notifications/tasks` of. The SDK's
 * listen router knows only its four change kinds (its filter drops
 * `taskIds`; typescript-sdk#2528), so the field is taken out before the
 * SDK serves the stream, and put back here: the acknowledgement lists the
 * task ids honored (those of tasks this session made, on connectors it
 * sees), and each such task's state follows on the stream, as tasks/get
 * would answer it, whenever it changed, until it is terminal. A stream
 * that asked for tasks alone rides on a tools list_changed subscription
 * the client never sees (the SDK closes a stream that honors nothing).
 * See decisions/tasks-on-listen-streams.md.
 */
export class TaskListen {
  constructor(
    private readonly tasks: TaskService,
    private readonly log: Logger,
  ) {}

  /**
   * Takes `taskIds` out of a listen request: undefined when it names
   * none this session can follow (the SDK serves the rest as ever), a
   * refusal, or what wraps the stream the SDK opens.
   */
  take(message: Record<string, unknown>, session: string, view: SessionView): Response | TaskStream | undefined {
    const params = message.params
    const filter = isObject(params) ? params.notifications : undefined
    if (!isObject(filter) || !('taskIds' in filter)) return undefined
    const asked = filter.taskIds
    delete filter.taskIds
    if (!declaresTasks((params as { _meta?: unknown })._meta)) {
      const err = tasksRequired()
      return jsonRpcError(400, err.code, err.message, message.id, err.data)
    }
    if (!Array.isArray(asked) || !asked.every((id) => typeof id === 'string'))
      return jsonRpcError(
        200,
        JSONRPC.INVALID_PARAMS,
        "Invalid params: 'taskIds' must be an array of task ids",
        message.id,
      )
    const honored = [...new Set(asked as string[])]
      .slice(0, MAX_LISTEN_TASKS)
      .filter((id) => this.tasks.reachable(id, session, view))
    if (!honored.length) return undefined
    const carried = !CORE_FIELDS.some((field) => filter[field] !== undefined && filter[field] !== false)
    if (carried) filter.toolsListChanged = true
    return new TaskStream(this.tasks, honored, { session, view, id: message.id, carried }, this.log)
  }
}

interface StreamOf {
  readonly session: string
  readonly view: SessionView
  /** The listen request's id: the subscription id its notifications carry. */
  readonly id: unknown
  /** The tools list_changed subscription exists only to keep the stream open: its notices are dropped. */
  readonly carried: boolean
}

const encoder = new TextEncoder()

/** One listen stream's task notifications, woven into the SDK's stream of it. */
export class TaskStream {
  private readonly stop = new AbortController()
  private out?: ReadableStreamDefaultController<Uint8Array>

  constructor(
    private readonly tasks: TaskService,
    readonly taskIds: readonly string[],
    private readonly of: StreamOf,
    private readonly log: Logger,
  ) {}

  /** The SDK's listen response, with the acknowledgement completed and the task notifications added. */
  wrap(response: Response): Response {
    if (!response.body) return response
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let pending = ''
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.out = controller
      },
      pull: async (controller) => {
        for (;;) {
          const { done, value } = await reader.read().catch((err: unknown) => {
            // the SDK's stream failed: so does this one (its reader sees the error), and the polling ends
            this.end()
            throw err
          })
          if (done) {
            this.end()
            controller.close()
            return
          }
          pending += decoder.decode(value, { stream: true })
          let passed = ''
          for (let at = pending.indexOf('\n\n'); at >= 0; at = pending.indexOf('\n\n')) {
            passed += this.frame(pending.slice(0, at + 2))
            pending = pending.slice(at + 2)
          }
          if (passed) return controller.enqueue(encoder.encode(passed))
        }
      },
      cancel: (reason) => {
        this.end()
        return reader.cancel(reason)
      },
    })
    return new Response(body, { status: response.status, headers: response.headers })
  }

  /** One SSE frame of the SDK's: as it is, completed (the acknowledgement), or dropped (a carrier notice). */
  private frame(frame: string): string {
    const data = /^data: (.*)$/m.exec(frame)?.[1]
    if (data === undefined) return frame
    let message: { method?: string; params?: { notifications?: Record<string, unknown> } }
    try {
      message = JSON.parse(data)
    } catch {
      // not one JSON line: none of the frames this changes, so it passes as it is
      return frame
    }
    if (message.method === 'notifications/tools/list_changed' && this.of.carried) return ''
    if (message.method !== 'notifications/subscriptions/acknowledged' || !message.params?.notifications) return frame
    const notifications = message.params.notifications
    if (this.of.carried) delete notifications.toolsListChanged
    notifications.taskIds = [...this.taskIds]
    // what the tasks are now follows the acknowledgement
    for (const handle of this.taskIds) void this.follow(handle)
    return `event: message\ndata: ${JSON.stringify(message)}\n\n`
  }

  /** Polls one task as its poll interval says, sending its state whenever it changed, until it is terminal. */
  private async follow(handle: string): Promise<void> {
    const { session, view } = this.of
    const signal = this.stop.signal
    let last = ''
    try {
      for (;;) {
        const task = await this.tasks.get(handle, session, view, { signal })
        const print = JSON.stringify(task)
        if (print !== last) this.send(task)
        last = print
        if (isTerminal(task.status)) return
        await pause(task.pollIntervalMs, signal)
      }
    } catch (err) {
      // the stream ended, or the task became unknown or unreachable: the client can still ask tasks/get
      if (!signal.aborted) this.log.debug('a listen stream stopped following a task', { error: err })
    }
  }

  private send(task: DetailedTask): void {
    if (this.stop.signal.aborted || !this.out) return
    const params = { ...task, _meta: { [META.subscriptionId]: this.of.id } }
    const message = { jsonrpc: '2.0', method: 'notifications/tasks', params }
    const frame = `event: message\ndata: ${JSON.stringify(message)}\n\n`
    this.out.enqueue(encoder.encode(frame))
  }

  private end(): void {
    this.stop.abort(new Error('the listen stream ended'))
  }
}
