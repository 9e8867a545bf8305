import { describe, expect, it } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import type { DetailedTask } from '../../src/runtime/registry/tasks.js'
import { MAX_LISTEN_TASKS, TaskListen, type TaskStream } from '../../src/runtime/mcpserver/task-listen.js'
import type { TaskService } from '../../src/runtime/mcpserver/task-service.js'
import { SessionView } from '../../src/runtime/sessions/session-view.js'

const TASKS = 'io.modelcontextprotocol/tasks'
const META = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } }
const log = createLogger(memorySink([]))
const frame = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`

/** Task states in the order tasks/get answers them, for the handles this session owns (`mine-*`). */
function service(states: Array<Partial<DetailedTask>>) {
  const answers = [...states]
  return {
    reachable: (handle: string) => handle.startsWith('mine-'),
    get: async (handle: string) => ({
      taskId: handle,
      createdAt: 'c',
      lastUpdatedAt: 'u',
      ttlMs: null,
      pollIntervalMs: 1,
      status: 'working',
      ...(answers.length > 1 ? answers.shift() : answers[0]),
    }),
  } as unknown as TaskService
}

/** What the SDK would stream: its frames, then (if `end`) its end. */
function sdkStream(frames: string[]) {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // two frames in one chunk, and one cut in two: frames are found whatever the chunks
      const text = frames.join('')
      const enc = new TextEncoder()
      controller.enqueue(enc.encode(text.slice(0, 17)))
      controller.enqueue(enc.encode(text.slice(17)))
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
}

async function messages(res: Response, until: (all: any[]) => boolean): Promise<any[]> {
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let text = ''
  const all: any[] = []
  while (!until(all)) {
    const { done, value } = await reader.read()
    if (done) break
    text += dec.decode(value, { stream: true })
    all.length = 0
    for (const f of text.split('\n\n')) {
      const data = /^data: (.*)$/m.exec(f)?.[1]
      if (data) all.push(JSON.parse(data))
      else if (f.startsWith(':')) all.push(f)
    }
  }
  await reader.cancel()
  return all
}

describe('taskIds on listen streams', () => {
  it('the ack lists the honored handles, the carrier is hidden, task states follow to the end', async () => {
    const listen = new TaskListen(
      service([{ status: 'working' }, { status: 'completed', result: { content: [] } }]),
      log,
    )
    const request = { id: 7, params: { _meta: META, notifications: { taskIds: ['mine-1', 'theirs', 'mine-1'] } } }
    const stream = listen.take(request, 's', SessionView.WHOLE)
    // nothing else asked for: the SDK is asked for tool changes, to keep the stream open
    expect(request.params.notifications).toEqual({ toolsListChanged: true })
    if (!stream || stream instanceof Response) throw new Error('no stream')
    const sdk = sdkStream([
      frame({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true } },
      }),
      frame({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: {} }),
      ': keepalive\n\n',
    ])
    const all = await messages(stream.wrap(sdk), (m) => m.some((x) => x.params?.status === 'completed'))
    expect(all[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: ['mine-1'] } },
    })
    expect(all.filter((m) => m.method === 'notifications/tools/list_changed')).toEqual([])
    expect(all).toContain(': keepalive')
    const tasks = all.filter((m) => m.method === 'notifications/tasks')
    expect(tasks.map((m) => m.params.status)).toEqual(['working', 'completed'])
    expect(tasks[0].params._meta).toEqual({ 'io.modelcontextprotocol/subscriptionId': 7 })
  })

  it('asked with other kinds: those stay the SDK’s, and are not hidden', () => {
    const request = { id: 1, params: { _meta: META, notifications: { taskIds: ['mine-1'], promptsListChanged: true } } }
    new TaskListen(service([{}]), log).take(request, 's', SessionView.WHOLE)
    expect(request.params.notifications).toEqual({ promptsListChanged: true })
  })

  it('refusals: undeclared (-32021, HTTP 400), not a list of ids (-32602); none honored: to the SDK', async () => {
    const listen = new TaskListen(service([{}]), log)
    const undeclared = listen.take(
      { id: 1, params: { notifications: { taskIds: ['mine-1'] } } },
      's',
      SessionView.WHOLE,
    )
    expect((undeclared as Response).status).toBe(400)
    expect(((await (undeclared as Response).json()) as any).error.code).toBe(-32021)
    const bad = listen.take(
      { id: 2, params: { _meta: META, notifications: { taskIds: 'mine-1' } } },
      's',
      SessionView.WHOLE,
    )
    expect(((await (bad as Response).json()) as any).error.code).toBe(-32602)
    const none = { id: 3, params: { _meta: META, notifications: { taskIds: ['theirs'] } } }
    expect(listen.take(none, 's', SessionView.WHOLE)).toBeUndefined()
    expect(none.params.notifications).toEqual({})
  })

  it(`one stream follows at most ${MAX_LISTEN_TASKS} tasks`, () => {
    const ids = Array.from({ length: MAX_LISTEN_TASKS + 5 }, (_, i) => `mine-${i}`)
    const stream = new TaskListen(service([{}]), log).take(
      { id: 1, params: { _meta: META, notifications: { taskIds: ids } } },
      's',
      SessionView.WHOLE,
    )
    expect((stream as TaskStream).taskIds).toEqual(ids.slice(0, MAX_LISTEN_TASKS))
  })
})
