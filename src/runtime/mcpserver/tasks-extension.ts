import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from '@modelcontextprotocol/server'
import { z } from 'zod'
import { META, TASKS_EXTENSION_ID } from '../mcp-wire.js'
import type { MCPToolBinding, RouteCallOptions } from '../registry/route.js'
import type { SessionView } from '../sessions/session-view.js'
import type { Era } from './classify.js'
import type { McpExchange } from './exchange.js'
import type { TaskService } from './task-service.js'

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
 * per-request server, in the 2026-07-28 era it belongs to: a tools/call
 * of a tool whose upstream runs it as a task answers a CreateTaskResult
 * (`resultType: "task"`) to a client that declares the extension on that
 * request; `tasks/get`, `tasks/update` and `tasks/cancel` reach the task
 * through its handle (task-service.ts). `tasks/list` and `tasks/result`
 * (2025-11-25) are not served: the SDK answers them -32601. The
 * 2025-06-18 era has no tasks: a tool that must run as one is driven to
 * its end by tutti and answered as a plain call.
 */

/** Declared on server/discover of the 2026-07-28 era, where it is served; no settings are defined. */
export function tasksCapability(era: Era | undefined): Record<string, Record<string, never>> {
  return era === 'modern' ? { [TASKS_EXTENSION_ID]: {} } : {}
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * Whether a request declares the extension in its own capabilities (the
 * only place a 2026-07-28 client does): `meta` is its `_meta`, or the
 * envelope the SDK took from it (`ctx.mcpReq.envelope`).
 */
export function declaresTasks(meta: unknown): boolean {
  const caps = isObject(meta) ? meta[META.clientCapabilities] : undefined
  const extensions = isObject(caps) ? caps.extensions : undefined
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION_ID])
}

/** -32021, naming the extension (SEP-2575 Missing Required Capabilities). */
export function tasksRequired(): MissingRequiredClientCapabilityError {
  const requiredCapabilities = { extensions: { [TASKS_EXTENSION_ID]: {} } }
  return new MissingRequiredClientCapabilityError({ requiredCapabilities }, 'Missing required client capability')
}

/**
 * How a tools/call of `exchange` is made: `answer`, when the tasks
 * extension decides it (a task, or -32021 for a tool that only runs as a
 * task and a client that cannot take one), run as the caller's relayed
 * request (what the upstream asks before it makes the task reaches the
 * caller, as a plain call's would); else the binding to call, which
 * for a 2025-06-18 caller of such a tool drives the task to its end.
 */
export function taskToolCall(
  tasks: TaskService,
  exchange: McpExchange,
  params: { arguments?: Record<string, unknown> },
  request: { envelope?: unknown },
): { answer?: (options: RouteCallOptions) => Promise<Record<string, unknown>>; binding: MCPToolBinding | undefined } {
  const { binding, era } = exchange.request
  const support = exchange.settled ? undefined : binding?.tool.taskSupport
  if (!binding || !support) return { binding }
  if (era === 'legacy') return { binding: support === 'required' ? tasks.driven(binding) : binding }
  if (declaresTasks(request.envelope))
    return { binding, answer: (options) => tasks.create(binding, params.arguments, exchange.session, options) }
  if (support === 'required') return { binding, answer: () => Promise.reject(tasksRequired()) }
  return { binding }
}

const taskParams = z.looseObject({ taskId: z.string() })

/** tasks/get, tasks/update and tasks/cancel, for a client that declares the extension on the request. */
export function serveTasks(
  server: Server,
  tasks: TaskService,
  era: Era | undefined,
  session: string,
  view: SessionView,
) {
  if (era !== 'modern') return
  const gate = (envelope: unknown) => {
    if (!declaresTasks(envelope)) throw tasksRequired()
  }
  server.setRequestHandler('tasks/get', { params: taskParams }, async (params, ctx) => {
    gate(ctx.mcpReq.envelope)
    return (await tasks.get(params.taskId, session, view, { signal: ctx.mcpReq.signal })) as never
  })
  server.setRequestHandler('tasks/cancel', { params: taskParams }, async (params, ctx) => {
    gate(ctx.mcpReq.envelope)
    return tasks.change('tasks/cancel', params, session, view, { signal: ctx.mcpReq.signal })
  })
  server.setRequestHandler('tasks/update', { params: taskParams }, async (params, ctx) => {
    gate(ctx.mcpReq.envelope)
    // the SDK takes `inputResponses` out of the params of every 2026-07-28 request (its multi round-trip field)
    const inputResponses = ctx.mcpReq.inputResponses as Record<string, unknown> | undefined
    if (!inputResponses) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'tasks/update needs inputResponses')
    const signal = ctx.mcpReq.signal
    return tasks.change('tasks/update', { taskId: params.taskId, inputResponses }, session, view, { signal })
  })
}
