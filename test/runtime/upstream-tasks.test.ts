import { ProtocolError, ProtocolErrorCode, type Client } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { UpstreamTasks } from '../../src/runtime/upstream/upstream-tasks.js'

const TASK = {
  taskId: 'up-1',
  status: 'working',
  ttl: 300000.4,
  pollInterval: 1000,
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUpdatedAt: '2026-01-01T00:00:01.000Z',
  statusMessage: 'Gathering sources...',
}

/** An SDK client whose answers the test scripts, by method; it records what was sent. */
function upstream(answers: Record<string, unknown>) {
  const sent: Array<{ method: string; params: unknown }> = []
  const client = {
    request: async ({ method, params }: { method: string; params: unknown }) => {
      sent.push({ method, params })
      const answer = answers[method]
      if (answer instanceof Error) throw answer
      return typeof answer === 'function' ? answer(params) : answer
    },
  } as unknown as Client
  return { sent, tasks: new UpstreamTasks(client, 'fx', 'E1', 60_000) }
}

describe('UpstreamTasks: the 2025-11-25 task wire, answered in the extension shapes', () => {
  it('asks for a task on tools/call and gives the task flat, with the durations renamed to integer ms', async () => {
    const { sent, tasks } = upstream({ 'tools/call': { task: TASK } })
    const answer = await tasks.call('slow', { n: 1 }, {})
    expect(sent).toEqual([{ method: 'tools/call', params: { name: 'slow', arguments: { n: 1 }, task: {} } }])
    expect(answer).toEqual({
      kind: 'task',
      epoch: 'E1',
      task: {
        taskId: 'up-1',
        status: 'working',
        statusMessage: 'Gathering sources...',
        createdAt: TASK.createdAt,
        lastUpdatedAt: TASK.lastUpdatedAt,
        ttlMs: 300000,
        pollIntervalMs: 1000,
      },
    })
  })

  it('an upstream that answers at once gives the result; neither shape is an internal error', async () => {
    const result = { content: [{ type: 'text', text: 'done' }] }
    expect(await upstream({ 'tools/call': result }).tasks.call('slow', undefined, {})).toEqual({
      kind: 'result',
      result,
    })
    await expect(upstream({ 'tools/call': { nothing: 1 } }).tasks.call('slow', undefined, {})).rejects.toMatchObject({
      code: ProtocolErrorCode.InternalError,
    })
  })

  it('tasks/get of a completed task inlines its tasks/result, without the related-task _meta', async () => {
    const result = {
      content: [{ type: 'text', text: 'report' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'up-1' }, other: 1 },
    }
    const { sent, tasks } = upstream({ 'tasks/get': { ...TASK, status: 'completed' }, 'tasks/result': result })
    const task = await tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E1' }, {})
    expect(task).toMatchObject({ status: 'completed', result: { content: result.content, _meta: { other: 1 } } })
    expect(sent.map((s) => s.method)).toEqual(['tasks/get', 'tasks/result'])
  })

  it('a failed task carries the JSON-RPC error its tasks/result ends with, and no result', async () => {
    const error = new ProtocolError(ProtocolErrorCode.InternalError, 'boom', { why: 'x' })
    const { tasks } = upstream({ 'tasks/get': { ...TASK, status: 'failed' }, 'tasks/result': error })
    const task = await tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E1' }, {})
    expect(task).toMatchObject({ status: 'failed', error: { code: -32603, data: { why: 'x' } } })
    expect(task).not.toHaveProperty('result')
  })

  it('tasks/cancel is an empty ack, also of a finished task (2025-11-25 refuses that one with -32602)', async () => {
    const refused = new ProtocolError(ProtocolErrorCode.InvalidParams, 'Cannot cancel task in terminal status')
    const finished = upstream({ 'tasks/cancel': refused, 'tasks/get': { ...TASK, status: 'cancelled' } })
    expect(await finished.tasks.request({ method: 'tasks/cancel', taskId: 'up-1', epoch: 'E1' }, {})).toEqual({})
    const unknown = new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found')
    const gone = upstream({ 'tasks/cancel': refused, 'tasks/get': unknown })
    await expect(gone.tasks.request({ method: 'tasks/cancel', taskId: 'x', epoch: 'E1' }, {})).rejects.toMatchObject({
      code: -32602,
    })
  })

  it('a task of another connection (epoch) is unknown, without asking the upstream', async () => {
    const { sent, tasks } = upstream({ 'tasks/get': TASK })
    await expect(tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E0' }, {})).rejects.toMatchObject({
      code: -32602,
    })
    expect(sent).toEqual([])
  })

  it('tasks/update acks a task it knows (no input request of this wire is outstanding)', async () => {
    const { tasks } = upstream({ 'tasks/get': TASK })
    const update = { method: 'tasks/update' as const, taskId: 'up-1', epoch: 'E1', inputResponses: { k: {} } }
    expect(await tasks.request(update, {})).toEqual({})
  })
})
