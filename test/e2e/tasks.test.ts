import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { makeConnector } from '../support/connector-fixture.js'
import { installed, prepared } from '../support/in-process.js'
import { legacyClient, MODERN_META, modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, connectorState, REPO, tempStateDir } from '../support/tutti.js'

/**
 * Tasks (issue 24 item 7, the `io.modelcontextprotocol/tasks` extension,
 * SEP-2663) through the connector server, with the real
 * `@modelcontextprotocol/server-everything`, whose `simulate-research-query`
 * must run as a task (2025-11-25 tasks: four stages of a second each). The
 * connector is lazy with a 1 s idle timeout: its upstream must stay up
 * while the task runs.
 */
const TASKS = 'io.modelcontextprotocol/tasks'
const DECLARING = { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } }
const TOOL = 'research_simulate-research-query'

const everything = (key: string, idleTimeoutSeconds: number) =>
  makeConnector({
    schemaVersion: 1,
    key,
    name: `Everything ${key}`,
    version: '1.0.0',
    description: 'server-everything, stopped when idle',
    auth: { kind: 'none' },
    mcp: { transport: 'stdio', command: 'mcp-server-everything', args: ['stdio'], idleTimeoutSeconds },
  })

/** test/fixtures/task-server.mjs: the tools the conformance suite's tasks-* scenarios ask of a server. */
const jobs = () =>
  makeConnector(
    {
      schemaVersion: 1,
      key: 'jobs',
      name: 'Jobs',
      version: '1.0.0',
      description: 'a 2025-11-25 task server',
      auth: { kind: 'none' },
      mcp: { transport: 'stdio', command: 'node', args: ['server.mjs'] },
    },
    { 'server.mjs': fs.readFileSync(path.join(REPO, 'test/fixtures/task-server.mjs'), 'utf8') },
  )

/** A 2026-07-28 request that declares the tasks extension (or not); tasks/* carry their Mcp-Name. */
async function post(binding: Binding, method: string, params: Record<string, unknown>, declare = true) {
  const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {}
  return modernPost(binding, method, { ...params, _meta: declare ? DECLARING : MODERN_META }, headers)
}

async function result(binding: Binding, method: string, params: Record<string, unknown>) {
  const res = await post(binding, method, params)
  expect(res.json?.error, `${method}: ${res.text}`).toBeUndefined()
  return res.json.result
}

/** Polls tasks/get (as a client would, at the task's interval) until the task is terminal. */
async function finished(binding: Binding, taskId: string) {
  return eventually(
    () => result(binding, 'tasks/get', { taskId }),
    (t) => ['completed', 'failed', 'cancelled'].includes(t.status),
  )
}

/** A subscriptions/listen stream over HTTP, read as it comes: its JSON-RPC messages, in order. */
async function listen(binding: Binding, notifications: Record<string, unknown>) {
  const res = await fetch(binding.url, {
    method: 'POST',
    headers: {
      ...binding.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'watch',
      method: 'subscriptions/listen',
      params: { _meta: DECLARING, notifications },
    }),
  })
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const messages: any[] = []
  let pending = ''
  /** Reads until a message satisfies `ok`: the stream's own events, never a timer. */
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
  return { messages, next, close: () => reader.cancel() }
}

describe('tasks of a real server, through the connector server', () => {
  let dir: string
  let binding: Binding
  let other: Binding
  beforeAll(async () => {
    dir = tempStateDir('tasks')
    await installed(dir, everything('research', 1))
    await installed(dir, everything('clock', 1))
    await installed(dir, jobs())
    binding = (await prepared(dir, { session: 'tasks' })).mcpServers[0]!
    other = (await prepared(dir, { session: 'another' })).mcpServers[0]!
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('server/discover declares the extension in 2026-07-28; the 2025-06-18 handshake has no tasks', async () => {
    const discovered = await result(binding, 'server/discover', {})
    expect(discovered.capabilities.extensions).toMatchObject({ [TASKS]: {} })
    expect(discovered.capabilities).not.toHaveProperty('tasks')
    const legacy = await legacyClient(binding)
    const caps = legacy.getServerCapabilities()!
    expect(caps.extensions ?? {}).not.toHaveProperty(TASKS)
    expect(caps).not.toHaveProperty('tasks')
    await legacy.close()
  })

  it(
    'a task-augmented call gets a handle naming the connector; the upstream is not stopped as idle while the ' +
      'task lives; tasks/get inlines the result; then the upstream idles out',
    async () => {
      const created = await result(binding, 'tools/call', { name: TOOL, arguments: { topic: 'tides' } })
      expect(created).toMatchObject({ resultType: 'task', status: 'working' })
      expect(created).not.toHaveProperty('task')
      expect(created.taskId).toMatch(/^research\./)
      expect(created.ttlMs).toBe(300000)
      expect(created.pollIntervalMs).toBe(1000)
      const running = await connectorState(dir, 'research')
      expect(running).toMatchObject({ upstream: 'running' })
      // a connector with the same idle timeout, used after the task was made: once it has idled out, the task's
      // upstream would have too, had its live task not counted
      const clock = await modernClient(binding)
      await clock.callTool({ name: 'clock_echo', arguments: { message: 'tick' } })
      await clock.close()
      expect(
        await eventually(
          () => connectorState(dir, 'clock'),
          (s) => s.upstream === 'stopped',
        ),
      ).toMatchObject({
        upstream: 'stopped',
      })
      expect(await connectorState(dir, 'research')).toMatchObject({ upstream: 'running', pid: running.pid })
      const done = await finished(binding, created.taskId)
      expect(done).toMatchObject({ resultType: 'complete', taskId: created.taskId, status: 'completed' })
      expect(done.result.content[0].text).toContain('# Research Report: tides')
      expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined()
      expect((await connectorState(dir, 'research')).starts).toBe(running.starts)
      // the task over, the idle timeout applies again
      expect(
        await eventually(
          () => connectorState(dir, 'research'),
          (s) => s.upstream === 'stopped',
        ),
      ).toMatchObject({
        upstream: 'stopped',
      })
    },
  )

  it("another session's task id is unknown to every tasks method; the owner still reaches it", async () => {
    const created = await result(binding, 'tools/call', { name: TOOL, arguments: { topic: 'secret' } })
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const params =
        method === 'tasks/update' ? { taskId: created.taskId, inputResponses: {} } : { taskId: created.taskId }
      const res = await post(other, method, params)
      expect(res.json?.error, method).toMatchObject({ code: -32602 })
    }
    // a handle with its MAC of one session and its upstream id changed is no task either
    const forged = created.taskId.replace(/\.[^.]+\.([^.]+)$/, '.AAAA.$1')
    expect((await post(binding, 'tasks/get', { taskId: forged })).json?.error).toMatchObject({ code: -32602 })
    expect((await result(binding, 'tasks/get', { taskId: created.taskId })).status).toBe('working')
    expect((await result(binding, 'tasks/cancel', { taskId: created.taskId })).resultType).toBe('complete')
  })

  it("a listen stream with taskIds gets notifications/tasks of its own session's task, through its end", async () => {
    const created = await result(binding, 'tools/call', { name: TOOL, arguments: { topic: 'news' } })
    const theirs = await listen(other, { taskIds: [created.taskId], toolsListChanged: true })
    const theirAck = await theirs.next((m) => m.method === 'notifications/subscriptions/acknowledged')
    expect(theirAck.params.notifications).toEqual({ toolsListChanged: true })
    const mine = await listen(binding, { taskIds: [created.taskId] })
    const ack = await mine.next((m) => m.method === 'notifications/subscriptions/acknowledged')
    expect(ack.params.notifications).toEqual({ taskIds: [created.taskId] })
    const done = await mine.next((m) => m.method === 'notifications/tasks' && m.params.status === 'completed')
    expect(done.params).toMatchObject({
      taskId: created.taskId,
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'watch' },
    })
    expect(done.params.result.content[0].text).toContain('# Research Report: news')
    const states = mine.messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params)
    // the states it went through as its upstream told them (its stages), each once: sent on a change only
    expect(states[0].status).toBe('working')
    expect(states.at(-1).status).toBe('completed')
    expect(states.length).toBeGreaterThan(2)
    expect(new Set(states.map((t) => JSON.stringify(t))).size).toBe(states.length)
    await mine.close()
    // the other session's stream got nothing of it
    expect(theirs.messages.filter((m) => m.method === 'notifications/tasks')).toEqual([])
    await theirs.close()
  })

  it('a tool error ends the task completed with isError; a JSON-RPC error ends it failed, with the error', async () => {
    const failing = await result(binding, 'tools/call', { name: 'jobs_failing_job', arguments: {} })
    const failed = await finished(binding, failing.taskId)
    expect(failed).toMatchObject({ status: 'completed', result: { isError: true } })
    const panicking = await result(binding, 'tools/call', { name: 'jobs_protocol_error_job', arguments: {} })
    const panicked = await finished(binding, panicking.taskId)
    expect(panicked).toMatchObject({ status: 'failed', error: { code: -32603 } })
    expect(panicked.error.message).toContain('the job panicked')
    expect(panicked).not.toHaveProperty('result')
  })

  it('a tool that may run as a task is a plain call without the extension; one that takes none always is', async () => {
    const plain = await post(
      binding,
      'tools/call',
      { name: 'jobs_slow_compute', arguments: { seconds: 0, label: 'now' } },
      false,
    )
    expect(plain.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'computed now' }],
    })
    // a 2025-11-25 client's `task` on a tool that takes no task is tolerated and changes nothing
    const greet = await result(binding, 'tools/call', {
      name: 'jobs_greet',
      arguments: { name: 'W' },
      task: { ttl: 1 },
    })
    expect(greet).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, W!' }] })
    expect(greet).not.toHaveProperty('taskId')
  })

  it('tasks/cancel acks empty, the task ends cancelled, and a second cancel acks the same', async () => {
    const created = await result(binding, 'tools/call', { name: 'jobs_slow_compute', arguments: { seconds: 60 } })
    const ack = await result(binding, 'tasks/cancel', { taskId: created.taskId })
    expect(Object.keys(ack).sort()).toEqual(['_meta', 'resultType'])
    expect(ack.resultType).toBe('complete')
    expect((await finished(binding, created.taskId)).status).toBe('cancelled')
    expect((await result(binding, 'tasks/cancel', { taskId: created.taskId })).resultType).toBe('complete')
  })

  it('without the extension declared: tasks methods get -32021, and a tool that only runs as a task too', async () => {
    const call = await post(binding, 'tools/call', { name: TOOL, arguments: { topic: 'x' } }, false)
    expect(call.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    })
    const get = await post(binding, 'tasks/get', { taskId: 'research.x.y.z' }, false)
    expect(get.json.error.code).toBe(-32021)
    for (const method of ['tasks/list', 'tasks/result'])
      expect((await post(binding, method, method === 'tasks/list' ? {} : { taskId: 'x' })).json.error.code).toBe(-32601)
  })

  it('a 2025-06-18 client calls the tool as any other: tutti runs the task to its end for it', async () => {
    const legacy = await legacyClient(binding)
    const answer = await legacy.callTool({ name: TOOL, arguments: { topic: 'driven' } })
    expect((answer.content as Array<{ text: string }>)[0]!.text).toContain('# Research Report: driven')
    // a tool error of a driven task is the call's tool error
    const failing = await legacy.callTool({ name: 'jobs_failing_job', arguments: {} })
    expect(failing).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the job failed' }] })
    await legacy.close()
  })
})
