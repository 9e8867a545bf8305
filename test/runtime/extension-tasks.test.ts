import { ProtocolErrorCode, type Client } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { UpstreamInputRequired } from '../../src/runtime/registry/call-relay.js'
import {
  declaresTasksExtension,
  ExtensionTasks,
  relaysExtensionTasks,
  sdkTaskWire,
  type Tracked,
} from '../../src/runtime/upstream/extension-tasks.js'

const EXT = 'io.modelcontextprotocol/tasks'
const CAPS = 'io.modelcontextprotocol/clientCapabilities'
const TASK = {
  taskId: 'up-1',
  status: 'working',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUpdatedAt: '2026-01-01T00:00:01.000Z',
  ttlMs: 300000,
  pollIntervalMs: 100,
}

/**
 * An SDK client whose answers the test scripts, by method; it records what was sent. `narrowed`: the caller's
 * capabilities as CallRelays.track puts them in `_meta` (undefined: the caller declared all tutti declares).
 */
function upstream(answers: Record<string, unknown>, narrowed?: Record<string, unknown>) {
  const sent: Array<{ method: string; params: any }> = []
  const client = {
    request: async ({ method, params }: { method: string; params: unknown }) => {
      sent.push({ method, params })
      const answer = answers[method]
      if (answer instanceof Error) throw answer
      return answer
    },
  } as unknown as Client
  const tracked: Tracked = (_options, request) =>
    request(narrowed ? { progressToken: 'tutti-1', [CAPS]: narrowed } : undefined)
  return { sent, tasks: new ExtensionTasks(sdkTaskWire(client), false, 'fx', 'E1', 60_000, tracked) }
}

describe('ExtensionTasks: the SEP-2663 wire of an upstream that declared the extension, passed through', () => {
  it('tells the extension from the 2025-11-25 tasks capability', () => {
    expect(declaresTasksExtension({ extensions: { [EXT]: {} } })).toBe(true)
    expect(declaresTasksExtension({ tasks: { requests: { tools: { call: {} } } } })).toBe(false)
    expect(declaresTasksExtension({ extensions: { other: {} } })).toBe(false)
    expect(declaresTasksExtension(undefined)).toBe(false)
  })

  it('is relayed where the upstream declares it, whatever the link (raw requests on a 2026-07-28 one)', () => {
    expect(relaysExtensionTasks({ getServerCapabilities: () => ({ extensions: { [EXT]: {} } }) })).toBe(true)
    expect(relaysExtensionTasks({ getServerCapabilities: () => ({ tools: {} }) })).toBe(false)
  })

  it('2026-07-28: a round before the task passes through; the caller’s answers go back with its state', async () => {
    const sent: Array<{ method: string; params: any }> = []
    const replies = [
      {
        resultType: 'input_required',
        inputRequests: { confirm: { method: 'elicitation/create' } },
        requestState: 's1',
      },
      { resultType: 'task', ...TASK },
    ]
    const wire = async (method: string, params: Record<string, unknown>) => {
      sent.push({ method, params })
      return replies.shift()
    }
    const tasks = new ExtensionTasks(wire, true, 'fx', 'E1', 60_000, (_options, request) => request())
    const relay = { session: 's', rounds: {} }
    const asked = await tasks.call('slow', { n: 1 }, { relay }).catch((err: unknown) => err)
    expect(asked).toBeInstanceOf(UpstreamInputRequired)
    expect(asked).toMatchObject({ inputRequests: { confirm: { method: 'elicitation/create' } }, requestState: 's1' })
    const answers = { confirm: { action: 'accept', content: {} } }
    const again = { session: 's', rounds: { inputResponses: answers, requestState: 's1' } }
    expect(await tasks.call('slow', { n: 1 }, { relay: again })).toMatchObject({ kind: 'task' })
    expect(sent[1]!.params).toMatchObject({
      name: 'slow',
      arguments: { n: 1 },
      inputResponses: answers,
      requestState: 's1',
    })
    // a 2025 link never gets round fields: its upstream asks by requests of its own
    const legacy = new ExtensionTasks(wire, false, 'fx', 'E1', 60_000, (_options, request) => request())
    replies.push({ resultType: 'task', ...TASK })
    await legacy.call('slow', undefined, { relay: again })
    expect(sent[2]!.params).not.toHaveProperty('inputResponses')
  })

  it('declares the extension on each request, beside what the caller can answer, with the relay meta', async () => {
    const { sent, tasks } = upstream({ 'tools/call': { resultType: 'task', ...TASK } }, { elicitation: {} })
    const answer = await tasks.call('slow', { n: 1 }, {})
    expect(answer).toEqual({ kind: 'task', epoch: 'E1', task: TASK })
    expect(sent).toEqual([
      {
        method: 'tools/call',
        params: {
          name: 'slow',
          arguments: { n: 1 },
          _meta: { progressToken: 'tutti-1', [CAPS]: { elicitation: {}, extensions: { [EXT]: {} } } },
        },
      },
    ])
    // a caller that declared everything: all tutti declares upstream, and the extension
    const all = upstream({ 'tools/call': { resultType: 'task', ...TASK } })
    await all.tasks.call('slow', undefined, {})
    expect(all.sent[0]!.params._meta[CAPS]).toMatchObject({ elicitation: {}, sampling: {}, extensions: { [EXT]: {} } })
  })

  it('takes a task from a 2025 connection, whose SDK drops resultType and adds an empty content', async () => {
    const { tasks } = upstream({ 'tools/call': { content: [], ...TASK } })
    expect(await tasks.call('slow', undefined, {})).toEqual({ kind: 'task', epoch: 'E1', task: TASK })
  })

  it('a result at once is the result without its resultType; anything else is an internal error', async () => {
    const content = [{ type: 'text', text: 'Hello' }]
    expect(await upstream({ 'tools/call': { resultType: 'complete', content } }).tasks.call('g', {}, {})).toEqual({
      kind: 'result',
      result: { content },
    })
    const odd = upstream({ 'tools/call': { resultType: 'input_required', inputRequests: {} } })
    await expect(odd.tasks.call('g', {}, {})).rejects.toMatchObject({ code: ProtocolErrorCode.InternalError })
  })

  it('tasks/get passes the input requests, the result (without related-task meta) and the error through', async () => {
    const asked = { confirm: { method: 'elicitation/create', params: { message: 'Delete?' } } }
    const waiting = upstream({ 'tasks/get': { ...TASK, status: 'input_required', inputRequests: asked } })
    expect(await waiting.tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E1' }, {})).toEqual({
      ...TASK,
      status: 'input_required',
      inputRequests: asked,
    })
    const result = {
      resultType: 'complete',
      content: [{ type: 'text', text: 'done' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'up-1' } },
    }
    const done = upstream({ 'tasks/get': { ...TASK, status: 'completed', result } })
    expect(await done.tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E1' }, {})).toEqual({
      ...TASK,
      status: 'completed',
      result: { content: result.content },
    })
    const error = { code: -32603, message: 'the job crashed' }
    const failed = upstream({ 'tasks/get': { ...TASK, status: 'failed', error, requestState: 'x' } })
    const task = await failed.tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E1' }, {})
    expect(task).toEqual({ ...TASK, status: 'failed', error })
  })

  it('tasks/update carries the answers by the upstream keys; update and cancel are empty acks', async () => {
    const { sent, tasks } = upstream({ 'tasks/update': {}, 'tasks/cancel': { resultType: 'complete' } })
    const inputResponses = { confirm: { action: 'accept', content: { confirm: true } } }
    expect(await tasks.request({ method: 'tasks/update', taskId: 'up-1', epoch: 'E1', inputResponses }, {})).toEqual({})
    expect(await tasks.request({ method: 'tasks/cancel', taskId: 'up-1', epoch: 'E1' }, {})).toEqual({})
    expect(sent.map((s) => [s.method, s.params.taskId, s.params.inputResponses])).toEqual([
      ['tasks/update', 'up-1', inputResponses],
      ['tasks/cancel', 'up-1', undefined],
    ])
  })

  it('a task of another connection, or an answer about another task, is refused', async () => {
    const { sent, tasks } = upstream({ 'tasks/get': { ...TASK, taskId: 'up-2' } })
    await expect(tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E0' }, {})).rejects.toMatchObject({
      code: -32602,
    })
    expect(sent).toEqual([])
    await expect(tasks.request({ method: 'tasks/get', taskId: 'up-1', epoch: 'E1' }, {})).rejects.toMatchObject({
      code: ProtocolErrorCode.InternalError,
    })
  })
})
