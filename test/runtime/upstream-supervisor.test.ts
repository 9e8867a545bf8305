import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { BACKOFF, STABLE_AFTER_MS } from '../../src/runtime/upstream/backoff.js'
import type { UpstreamSpec } from '../../src/runtime/upstream/upstream-spec.js'
import {
  UpstreamSupervisor,
  type Activation,
  type SupervisorEvents,
} from '../../src/runtime/upstream/upstream-supervisor.js'
import { FakeDialer, tool } from '../support/fake-upstream.js'

const spec: UpstreamSpec = { kind: 'stdio', key: 'fx', command: '/bin/true', args: [], cwd: '/', env: {} }

function harness(activation: Activation = { kind: 'eager' }) {
  const dialer = new FakeDialer()
  const events: Array<{ type: string; [k: string]: unknown }> = []
  const handlers: SupervisorEvents = {
    toolsListed: (table, why) => events.push({ type: 'listed', why, names: table.tools.map((t) => t.name) }),
    failed: (reason, failures, retryAt) => events.push({ type: 'failed', reason, failures, retryAt }),
    stopped: (reason) => events.push({ type: 'stopped', reason }),
    signInRequired: (reason) => events.push({ type: 'sign-in', reason }),
  }
  const supervisor = new UpstreamSupervisor(spec, activation, handlers, createLogger(memorySink([])), dialer.open)
  return { dialer, events, supervisor }
}

describe('UpstreamSupervisor', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it(
    'eager: start() resolves with the table and does not report it as an event; ' + 'calls go to the connection',
    async () => {
      const { dialer, events, supervisor } = harness()
      dialer.script.push([tool('a'), tool('b')])
      expect((await supervisor.start()).tools.map((t) => t.name)).toEqual(['a', 'b'])
      expect(events).toEqual([])
      expect(supervisor.state).toBe('running')
      expect(await supervisor.callTool('a', {}, {})).toEqual({
        content: [{ type: 'text', text: `a from ${dialer.last.pid}` }],
      })
    },
  )

  it('eager: exits that come quickly double the backoff; a restart that lists tools reports them', async () => {
    const { dialer, events, supervisor } = harness()
    dialer.fallback = [tool('a')]
    await supervisor.start()
    const delays: number[] = []
    for (let i = 0; i < 4; i++) {
      dialer.last.exit()
      const failed = events.at(-1)!
      expect(failed).toMatchObject({ type: 'failed', failures: i + 1 })
      delays.push(Date.parse(failed.retryAt as string) - Date.now())
      expect(supervisor.state).toBe('restarting')
      await vi.advanceTimersByTimeAsync(delays.at(-1)!)
      expect(events.at(-1)).toEqual({ type: 'listed', why: 'started', names: ['a'] })
    }
    expect(delays).toEqual([BACKOFF.initialMs, BACKOFF.initialMs * 2, BACKOFF.initialMs * 4, BACKOFF.initialMs * 8])
    expect(supervisor.restarts).toBe(4)
  })

  it('eager: an upstream that stayed up past the stable period is forgiven its failures', async () => {
    const { dialer, events, supervisor } = harness()
    dialer.fallback = [tool('a')]
    await supervisor.start()
    dialer.last.exit()
    await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
    dialer.last.exit()
    expect(events.at(-1)).toMatchObject({ failures: 2 })
    await vi.advanceTimersByTimeAsync(BACKOFF.initialMs * 2)
    await vi.advanceTimersByTimeAsync(STABLE_AFTER_MS)
    dialer.last.exit()
    expect(events.at(-1)).toMatchObject({ type: 'failed', failures: 1 })
  })

  it('eager: a failed first start throws, and is retried with the same backoff until it works', async () => {
    const { dialer, events, supervisor } = harness()
    dialer.script.push(new Error('exited with code 3 before it answered initialize'), new Error('again'))
    dialer.fallback = [tool('a')]
    await expect(supervisor.start()).rejects.toThrow(/code 3/)
    expect(events).toEqual([
      {
        type: 'failed',
        reason: 'exited with code 3 before it answered initialize',
        failures: 1,
        retryAt: expect.any(String),
      },
    ])
    expect(supervisor.nextRetryAt).toBeDefined()
    await vi.advanceTimersByTimeAsync(BACKOFF.initialMs)
    expect(events.at(-1)).toMatchObject({ type: 'failed', reason: 'again', failures: 2 })
    await vi.advanceTimersByTimeAsync(BACKOFF.initialMs * 2)
    expect(events.at(-1)).toEqual({ type: 'listed', why: 'started', names: ['a'] })
    expect(supervisor.nextRetryAt).toBeUndefined()
  })

  it('eager: a call while the upstream is down fails at once with the last error, never hangs', async () => {
    const { dialer, supervisor } = harness()
    dialer.fallback = [tool('a')]
    await supervisor.start()
    dialer.last.exit('killed by SIGKILL')
    await expect(supervisor.callTool('a', {}, {})).rejects.toThrow(/not running \(upstream killed by SIGKILL\)/)
  })

  it('bursts of tools/list_changed are listed once', async () => {
    const { dialer, events, supervisor } = harness()
    dialer.fallback = [tool('a')]
    await supervisor.start()
    const link = dialer.last
    link.changeTools([tool('a'), tool('b')])
    link.changeTools([tool('a'), tool('b'), tool('c')])
    link.changeTools([tool('a'), tool('b'), tool('c')])
    await vi.advanceTimersByTimeAsync(100)
    expect(events).toEqual([{ type: 'listed', why: 'changed', names: ['a', 'b', 'c'] }])
    expect(link.listCount).toBe(2)
  })

  it(
    'lazy: nothing is dialed until the first call; concurrent first calls share one start; idle stops it; the next ' +
      'call starts again',
    async () => {
      const { dialer, events, supervisor } = harness({ kind: 'lazy', idleMs: 1_000 })
      dialer.fallback = [tool('a')]
      expect(dialer.specs).toHaveLength(0)
      const results = await Promise.all(Array.from({ length: 20 }, () => supervisor.callTool('a', {}, {})))
      expect(dialer.specs).toHaveLength(1)
      expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1)
      expect(events).toEqual([{ type: 'listed', why: 'started', names: ['a'] }])
      expect(supervisor.state).toBe('running')
      await vi.advanceTimersByTimeAsync(1_000)
      expect(supervisor.state).toBe('stopped')
      expect(events.at(-1)).toEqual({ type: 'stopped', reason: 'idle' })
      await supervisor.callTool('a', {}, {})
      expect(dialer.specs).toHaveLength(2)
      expect(supervisor.starts).toBe(2)
    },
  )

  it(
    'lazy: an idle upstream whose close takes its grace is running ' +
      '(pid and all) until the close ends, then stopped',
    async () => {
      const { dialer, events, supervisor } = harness({ kind: 'lazy', idleMs: 1_000 })
      dialer.fallback = [tool('a')]
      await supervisor.callTool('a', {}, {})
      let closeEnds!: () => void
      dialer.last.closeTakes = new Promise<void>((resolve) => (closeEnds = resolve))
      await vi.advanceTimersByTimeAsync(1_000)
      // the connection already refuses calls, but its process is still there
      expect(dialer.last.closed).toBe(true)
      expect(supervisor.state).toBe('running')
      expect(supervisor.pid).toBe(dialer.last.pid)
      expect(events.at(-1)).toEqual({ type: 'listed', why: 'started', names: ['a'] })
      closeEnds()
      await vi.advanceTimersByTimeAsync(0)
      expect(supervisor.state).toBe('stopped')
      expect(supervisor.pid).toBeUndefined()
      expect(events.at(-1)).toEqual({ type: 'stopped', reason: 'idle' })
    },
  )

  it(
    'lazy: each call moves the idle period on without a timer of its own; ' + 'a call still running holds the stop off',
    async () => {
      const { dialer, supervisor } = harness({ kind: 'lazy', idleMs: 1_000 })
      dialer.fallback = [tool('a')]
      await supervisor.callTool('a', {}, {})
      const scheduled = vi.spyOn(globalThis, 'setTimeout')
      for (let i = 0; i < 50; i++) await supervisor.callTool('a', {}, {})
      // the hot path schedules nothing: the one idle timer reads when the last call ended
      expect(scheduled).not.toHaveBeenCalled()
      scheduled.mockRestore()
      await vi.advanceTimersByTimeAsync(600)
      await supervisor.callTool('a', {}, {})
      // 1,000 ms after the first call, but only 400 ms after the last: still running
      await vi.advanceTimersByTimeAsync(400)
      expect(supervisor.state).toBe('running')
      await vi.advanceTimersByTimeAsync(600)
      expect(supervisor.state).toBe('stopped')
      expect(dialer.specs).toHaveLength(1)
    },
  )

  it(
    'lazy: an upstream holding a live task is not idle, however long the task takes; it stops an idle period ' +
      'after the task is seen to end',
    async () => {
      const { dialer, events, supervisor } = harness({ kind: 'lazy', idleMs: 1_000 })
      dialer.fallback = [tool('a')]
      const made = await supervisor.tasks.call('a', {}, {})
      expect(made).toMatchObject({ kind: 'task', task: { taskId: 't1', status: 'working' } })
      const { epoch } = made as { epoch: string }
      await vi.advanceTimersByTimeAsync(10_000)
      expect(supervisor.state).toBe('running')
      // a poll that still sees it working changes nothing
      await supervisor.tasks.request({ method: 'tasks/get', taskId: 't1', epoch }, {})
      await vi.advanceTimersByTimeAsync(5_000)
      expect(supervisor.state).toBe('running')
      dialer.last.taskStatus.set('t1', 'completed')
      expect(await supervisor.tasks.request({ method: 'tasks/get', taskId: 't1', epoch }, {})).toMatchObject({
        status: 'completed',
      })
      await vi.advanceTimersByTimeAsync(999)
      expect(supervisor.state).toBe('running')
      await vi.advanceTimersByTimeAsync(1)
      expect(supervisor.state).toBe('stopped')
      expect(events.at(-1)).toEqual({ type: 'stopped', reason: 'idle' })
      expect(dialer.specs).toHaveLength(1)
    },
  )

  it('lazy: a live task nobody asks about stops counting at its TTL, and the idle period runs from then', async () => {
    const { dialer, supervisor } = harness({ kind: 'lazy', idleMs: 1_000 })
    dialer.fallback = [tool('a')]
    await supervisor.callTool('a', {}, {})
    dialer.last.taskTtlMs = 60_000
    await supervisor.tasks.call('a', {}, {})
    await vi.advanceTimersByTimeAsync(60_000)
    expect(supervisor.state).toBe('running')
    await vi.advanceTimersByTimeAsync(999)
    expect(supervisor.state).toBe('running')
    await vi.advanceTimersByTimeAsync(1)
    expect(supervisor.state).toBe('stopped')
  })

  it('lazy: a failed start fails the call with the reason and schedules nothing', async () => {
    const { dialer, events, supervisor } = harness({ kind: 'lazy', idleMs: 1_000 })
    dialer.script.push(new Error('command "/x" not found'))
    await expect(supervisor.callTool('a', {}, {})).rejects.toThrow(/not found/)
    expect(events).toEqual([{ type: 'failed', reason: 'command "/x" not found', failures: 1, retryAt: undefined }])
    expect(supervisor.state).toBe('stopped')
  })

  it('an abandoned connect gives up without retrying; dispose closes, letting calls drain', async () => {
    const { dialer, events, supervisor } = harness()
    dialer.script.push(new Promise(() => {}))
    const started = supervisor.start()
    supervisor.abandonConnect()
    await expect(started).rejects.toThrow(/abandoned/)
    expect(events).toEqual([])
    await vi.advanceTimersByTimeAsync(60_000)
    expect(dialer.specs).toHaveLength(1)

    const other = harness()
    other.dialer.fallback = [tool('a')]
    await other.supervisor.start()
    await other.supervisor.dispose(1234)
    expect(other.dialer.last.closedWith).toBe(1234)
    await expect(other.supervisor.callTool('a', {}, {})).rejects.toThrow(/closed/)
  })
})
