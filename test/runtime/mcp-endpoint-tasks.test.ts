import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import type { RouteClient } from '../../src/runtime/registry/route.js'
import type { DetailedTask, RouteTasks, TaskStatus } from '../../src/runtime/registry/tasks.js'
import { until } from '../support/eventually.js'
import {
  legacy,
  MODERN_META,
  modernHeaders,
  read,
  request,
  startEndpoint,
  type Answer,
  type Harness,
} from './mcp-endpoint-harness.js'

const TASKS = 'io.modelcontextprotocol/tasks'
const DECLARING = { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } }

/** An upstream whose tools run as tasks: each call makes one, working until the test sets its status. */
class TaskUpstream implements RouteClient {
  readonly status = new Map<string, TaskStatus>()
  readonly asked: Array<{ method: string; taskId: string }> = []
  /** When the test's tasks were made: now, and a TTL of a minute (a driven task past it is given up). */
  createdAt = new Date().toISOString()
  ttlMs = 60_000
  async callTool(name: string) {
    return { content: [{ type: 'text', text: `called tk ${name}` }] }
  }
  private task(taskId: string): DetailedTask {
    const { createdAt, ttlMs } = this
    const status = this.status.get(taskId)!
    const done = status === 'completed' ? { result: { content: [{ type: 'text', text: `done ${taskId}` }] } } : {}
    return { taskId, status, createdAt, lastUpdatedAt: createdAt, ttlMs, pollIntervalMs: 250, ...done }
  }
  readonly tasks: RouteTasks = {
    call: async () => {
      const taskId = `up-${this.status.size + 1}`
      this.status.set(taskId, 'working')
      return { kind: 'task', task: this.task(taskId), epoch: 'E1' }
    },
    request: async (request) => {
      this.asked.push({ method: request.method, taskId: request.taskId })
      if (!this.status.has(request.taskId) || request.epoch !== 'E1') throw new Error('not found')
      return request.method === 'tasks/get' ? this.task(request.taskId) : {}
    },
  }
}

const tool = (name: string, taskSupport: string) => ({
  name,
  inputSchema: { type: 'object' },
  execution: { taskSupport },
})

/** A 2026-07-28 request of the session of `token` (the harness's own by default). */
async function modern(
  h: Harness,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  token = h.token,
): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: MODERN_META, ...params } })
  return read(
    await h.endpoint.handle(request(token, { headers: { ...modernHeaders(method, params), ...headers }, body })),
  )
}

/** A listen stream read as it comes: its JSON-RPC messages, in order. */
async function listen(h: Harness, token: string, notifications: Record<string, unknown>, meta: object = DECLARING) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 9,
    method: 'subscriptions/listen',
    params: { _meta: meta, notifications },
  })
  const res = (await h.endpoint.handle(
    request(token, { headers: modernHeaders('subscriptions/listen'), body }),
  )) as Response
  const messages: any[] = []
  if (!res.headers.get('content-type')?.includes('text/event-stream'))
    return { res, messages, next: async () => undefined, close: async () => {} }
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let pending = ''
  /** Reads until a message satisfies `ok` (the stream's own events: never a timer). */
  const next = async (ok: (m: any) => boolean): Promise<any> => {
    for (;;) {
      const found = messages.find(ok)
      if (found) return found
      const { done, value } = await reader.read()
      if (done) return undefined
      pending += decoder.decode(value, { stream: true })
      for (let at = pending.indexOf('\n\n'); at >= 0; at = pending.indexOf('\n\n')) {
        const data = /^data: (.*)$/m.exec(pending.slice(0, at))?.[1]
        pending = pending.slice(at + 2)
        if (data) messages.push(JSON.parse(data))
      }
    }
  }
  return { res, messages, next, close: () => reader.cancel() }
}

describe('the tasks extension on the connector endpoint', () => {
  let h: Harness
  let upstream: TaskUpstream
  beforeEach(async () => {
    h = await startEndpoint()
    upstream = new TaskUpstream()
    const tools = [
      tool('must', 'required'),
      tool('may', 'optional'),
      { name: 'plain', inputSchema: { type: 'object' } },
    ]
    h.registry.commit(buildRoute('tk', 1, upstream, { tools, features: { tasks: true } }))
  })
  afterEach(async () => {
    await h.close()
  })

  const create = async (name = 'tk_must', token?: string) => {
    const made = await modern(h, 'tools/call', { name, arguments: {}, _meta: DECLARING }, {}, token)
    expect(made.json.error, made.text).toBeUndefined()
    return made.json.result
  }
  const ask = (method: string, params: Record<string, unknown>, token?: string, meta: object = DECLARING) =>
    modern(h, method, { ...params, _meta: meta }, { 'mcp-name': String(params.taskId) }, token)

  it('a declaring client gets a flat CreateTaskResult, its id a handle; tasks/* reach the upstream task', async () => {
    const made = await create()
    expect(made).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 60_000, pollIntervalMs: 250 })
    expect(made).not.toHaveProperty('task')
    const [key, epoch, id] = made.taskId.split('.')
    expect([key, epoch, Buffer.from(id, 'base64url').toString()]).toEqual(['tk', 'E1', 'up-1'])
    upstream.status.set('up-1', 'completed')
    const got = (await ask('tasks/get', { taskId: made.taskId })).json.result
    expect(got).toMatchObject({ resultType: 'complete', taskId: made.taskId, status: 'completed' })
    expect(got.result.content).toEqual([{ type: 'text', text: 'done up-1' }])
    expect(upstream.asked).toEqual([{ method: 'tasks/get', taskId: 'up-1' }])
    // the Mcp-Name header mirrors the handle (SEP-2663's routing header): another value is refused (SEP-2243)
    const mismatch = await modern(h, 'tasks/get', { taskId: made.taskId, _meta: DECLARING }, { 'mcp-name': 'x' })
    expect(mismatch.json.error.code).toBe(-32020)
    const cancel = await ask('tasks/cancel', { taskId: made.taskId })
    expect(cancel.json.result.resultType).toBe('complete')
    const update = await ask('tasks/update', { taskId: made.taskId, inputResponses: {} })
    expect(update.json.result.resultType).toBe('complete')
  })

  it("another session's handle, a forged one, one of a gone connector: -32602, the upstream not asked", async () => {
    const made = await create()
    const other = await h.sessions.issue('ws', 'other', 'claude')
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update'])
      expect((await ask(method, { taskId: made.taskId, inputResponses: {} }, other)).json.error.code).toBe(-32602)
    // the same upstream id with a MAC of its own making
    const forged = made.taskId.replace(/[^.]+$/, Buffer.alloc(16).toString('base64url'))
    expect((await ask('tasks/get', { taskId: forged })).json.error).toMatchObject({ code: -32602 })
    expect((await ask('tasks/get', { taskId: 'up-1' })).json.error.code).toBe(-32602)
    expect(upstream.asked).toEqual([])
    h.registry.remove('tk', 1)
    expect((await ask('tasks/get', { taskId: made.taskId })).json.error.code).toBe(-32602)
  })

  it('without the extension: -32021 for tasks/* and a tool that must run as a task; one that may: a call', async () => {
    const must = await modern(h, 'tools/call', { name: 'tk_must', arguments: {} })
    expect(must.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    })
    expect((await ask('tasks/get', { taskId: 'x' }, undefined, MODERN_META)).json.error.code).toBe(-32021)
    const may = await modern(h, 'tools/call', { name: 'tk_may', arguments: {} })
    expect(may.json.result.content).toEqual([{ type: 'text', text: 'called tk may' }])
    // a tool that takes no task is a plain call even for a declaring client (and the fast path's to serve)
    expect((await create('tk_plain')).content).toEqual([{ type: 'text', text: 'called tk plain' }])
    for (const method of ['tasks/list', 'tasks/result'])
      expect((await ask(method, { taskId: 'x' })).json.error.code).toBe(-32601)
  })

  it('a 2025-06-18 call of a tool that must run as a task is driven to its end, answered as a call', async () => {
    const answer = legacy(h, { id: 3, method: 'tools/call', params: { name: 'tk_must', arguments: {} } })
    expect(await until(() => upstream.asked.length > 0)).toBe(true)
    upstream.status.set('up-1', 'completed')
    expect((await answer).json.result.content).toEqual([{ type: 'text', text: 'done up-1' }])
    // one that may run as a task is a plain call there
    const may = await legacy(h, { id: 4, method: 'tools/call', params: { name: 'tk_may', arguments: {} } })
    expect(may.json.result.content).toEqual([{ type: 'text', text: 'called tk may' }])
  })

  it('a driven task is cancelled when its caller goes away, and given up past its TTL', async () => {
    const gone = new AbortController()
    const call = legacy(h, { id: 5, method: 'tools/call', params: { name: 'tk_must' } }, '2025-06-18', gone.signal)
    expect(await until(() => upstream.asked.length > 0)).toBe(true)
    gone.abort()
    await call.catch(() => undefined)
    expect(await until(() => upstream.asked.some((a) => a.method === 'tasks/cancel'))).toBe(true)
    upstream.ttlMs = 0
    const late = await legacy(h, { id: 6, method: 'tools/call', params: { name: 'tk_must', arguments: {} } })
    expect(late.json.error.message).toMatch(/did not end within its time \(still working\)/)
    expect(upstream.asked.at(-1)).toEqual({ method: 'tasks/cancel', taskId: 'up-2' })
  })

  it('taskIds on a listen stream: the ack lists the handles it honors; each task follows until terminal', async () => {
    const made = await create()
    const other = await h.sessions.issue('ws', 'other', 'claude')
    const theirs = await create('tk_must', other)
    const stream = await listen(h, h.token, { taskIds: [made.taskId, theirs.taskId, 'nonsense'] })
    const ack = await stream.next((m) => m.method === 'notifications/subscriptions/acknowledged')
    expect(ack.params.notifications).toEqual({ taskIds: [made.taskId] })
    const working = await stream.next((m) => m.method === 'notifications/tasks')
    expect(working.params).toMatchObject({ taskId: made.taskId, status: 'working' })
    expect(working.params._meta).toEqual({ 'io.modelcontextprotocol/subscriptionId': 9 })
    upstream.status.set('up-1', 'completed')
    const done = await stream.next((m) => m.method === 'notifications/tasks' && m.params.status === 'completed')
    expect(done.params.result.content).toEqual([{ type: 'text', text: 'done up-1' }])
    expect(stream.messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status)).toEqual([
      'working',
      'completed',
    ])
    await stream.close()
  })

  it('taskIds from a client without the extension: -32021; none of its own: the SDK serves the rest', async () => {
    const refused = await listen(h, h.token, { taskIds: ['x'] }, MODERN_META)
    expect(refused.res.status).toBe(400)
    expect(((await refused.res.json()) as any).error.code).toBe(-32021)
    const plain = await listen(h, h.token, { taskIds: ['x'], toolsListChanged: true })
    const ack = await plain.next((m) => m.method === 'notifications/subscriptions/acknowledged')
    expect(ack.params.notifications).toEqual({ toolsListChanged: true })
    await plain.close()
  })
})
