import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { conformanceConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { MODERN_META, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir } from '../support/tutti.js'

/**
 * Tasks of an upstream that speaks the extension itself (SEP-2663): the
 * conformance fixture (test/fixtures/conformance-tasks.mjs, SDK v2), as a
 * stdio connector and as a remote one on its HTTP entry. Both links speak
 * 2026-07-28 (the stdio one after its server/discover probe), where the
 * SDK client's codec refuses a task answer, so tutti sends these raw
 * (upstream/raw-requests.ts): the task, its input requests under the
 * upstream's own keys, the answers through tasks/update and the result
 * pass through; another session cannot reach the task.
 */
const TASKS = 'io.modelcontextprotocol/tasks'
const DECLARING = {
  ...MODERN_META,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } },
}

async function result(binding: Binding, method: string, params: Record<string, unknown>) {
  const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {}
  const res = await modernPost(binding, method, { ...params, _meta: DECLARING }, headers)
  expect(res.json?.error, `${method}: ${res.text}`).toBeUndefined()
  return res.json.result
}

const until = (binding: Binding, taskId: string, status: string) =>
  eventually(
    () => result(binding, 'tasks/get', { taskId }),
    (t) => t.status === status,
  )

describe('tasks of an upstream that speaks the extension, passed through', () => {
  let dir: string
  let http: ChildProcess | undefined
  const links: Record<'stdio' | 'http', { owner: Binding; other: Binding }> = {} as never

  beforeAll(async () => {
    dir = tempStateDir('tasks-extension')
    const release = conformanceConnector('jobs')
    http = spawn(process.execPath, ['conformance-server.mjs'], {
      cwd: release,
      env: { ...process.env, FIXTURE_HTTP_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const port = await new Promise<string>((resolve, reject) => {
      http!.stdout!.on('data', (chunk: Buffer) => {
        const listening = /listening (\d+)/.exec(chunk.toString())
        if (listening) resolve(listening[1]!)
      })
      http!.on('exit', (code) => reject(new Error(`the fixture exited (${code}) before it listened`)))
    })
    const manifest = JSON.parse(fs.readFileSync(path.join(release, 'tutti-connector.json'), 'utf8'))
    const remote = {
      ...manifest,
      key: 'remote',
      name: 'Remote jobs',
      mcp: { transport: 'http', url: `http://127.0.0.1:${port}/mcp` },
    }
    const remoteDir = fs.mkdtempSync(path.join(path.dirname(release), 'tutti-remote-jobs-'))
    fs.writeFileSync(path.join(remoteDir, 'tutti-connector.json'), JSON.stringify(remote))
    await installed(dir, release)
    await installed(dir, remoteDir)
    for (const [link, key] of [
      ['stdio', 'jobs'],
      ['http', 'remote'],
    ] as const) {
      const session = (name: string) => prepared(dir, { provider: 'tutti-agent', session: name, as: key })
      links[link] = {
        owner: (await session(`${link}-owner`)).mcpServers[0]!,
        other: (await session(`${link}-other`)).mcpServers[0]!,
      }
    }
  })
  afterAll(async () => {
    http?.kill()
    await cleanupState(dir)
  })

  const LINKS = ['stdio', 'http'] as const

  it.each(LINKS)('%s: a task waits for input under the upstream’s keys, tasks/update answers it', async (link) => {
    const { owner, other } = links[link]
    const created = await result(owner, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } })
    expect(created).toMatchObject({ resultType: 'task', status: expect.any(String), ttlMs: 300000 })
    const { taskId } = created
    const waiting = await until(owner, taskId, 'input_required')
    expect(waiting.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: expect.objectContaining({ message: 'Delete a.txt?' }),
      },
    })
    // another session's request for the task: unknown, and nothing reaches the upstream's task
    const stranger = await modernPost(other, 'tasks/get', { taskId, _meta: DECLARING }, { 'mcp-name': taskId })
    expect(stranger.json.error.code).toBe(-32602)
    const answer = { action: 'accept', content: { confirm: true } }
    const update = { taskId, inputResponses: { confirm: answer, unasked: answer } }
    expect(await result(owner, 'tasks/update', update)).toMatchObject({})
    const done = await until(owner, taskId, 'completed')
    expect(done.result.content[0].text).toBe(`delete a.txt: ${JSON.stringify({ confirm: answer })}`)
    expect(done).not.toHaveProperty('inputRequests')
  })

  it.each(LINKS)(
    '%s: a protocol error ends the task failed; a cancel acks empty and ends it cancelled',
    async (link) => {
      const { owner } = links[link]
      const crashed = await result(owner, 'tools/call', { name: 'protocol_error_job', arguments: {} })
      const failed = await until(owner, crashed.taskId, 'failed')
      expect(failed.error).toEqual({ code: -32603, message: 'the job crashed' })
      expect(failed).not.toHaveProperty('result')
      const slow = await result(owner, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })
      const ack = await result(owner, 'tasks/cancel', { taskId: slow.taskId })
      expect(ack.resultType).toBe('complete')
      expect(ack).not.toHaveProperty('taskId')
      await until(owner, slow.taskId, 'cancelled')
    },
  )

  it.each(LINKS)(
    '%s: a caller that does not declare the extension gets no task; one that needs it: -32021',
    async (link) => {
      const { owner } = links[link]
      const plain = { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': {} }
      const sync = await modernPost(owner, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0, label: 'x' },
        _meta: plain,
      })
      expect(sync.json.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'computed x after 0 s' }],
      })
      expect(sync.json.result).not.toHaveProperty('taskId')
      const refused = await modernPost(owner, 'tools/call', { name: 'failing_job', arguments: {}, _meta: plain })
      expect(refused.json.error.code).toBe(-32021)
    },
  )
})
