import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LIVE_TASK_QUIET_MS, LiveTasks } from '../../src/runtime/upstream/live-tasks.js'

const conn = { name: 'connection 1' }
const other = { name: 'connection 2' }
const task = (taskId: string, status: 'working' | 'completed' | 'cancelled', ttlMs: number | null = null) => ({
  taskId,
  status,
  createdAt: new Date().toISOString(),
  ttlMs,
})

describe('LiveTasks', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a task counts for its connection until it is seen terminal; then the connection has settled', () => {
    const settled = vi.fn()
    const live = new LiveTasks(settled)
    live.observed(conn, 'e1', task('a', 'working'))
    live.observed(conn, 'e1', task('b', 'working'))
    expect(live.holds(conn)).toBe(true)
    expect(live.holds(other)).toBe(false)
    live.observed(conn, 'e1', task('a', 'completed'))
    expect(live.holds(conn)).toBe(true)
    expect(settled).not.toHaveBeenCalled()
    live.observed(conn, 'e1', task('b', 'cancelled'))
    expect(live.holds(conn)).toBe(false)
    expect(settled).toHaveBeenCalledTimes(1)
  })

  it('the same upstream id on another epoch is another task', () => {
    const live = new LiveTasks(() => {})
    live.observed(conn, 'e1', task('a', 'working'))
    live.observed(other, 'e2', task('a', 'completed'))
    expect(live.holds(conn)).toBe(true)
    expect(live.size).toBe(1)
  })

  it('a task past its TTL stops counting, without anyone asking', async () => {
    const settled = vi.fn()
    const live = new LiveTasks(settled)
    live.observed(conn, 'e1', task('a', 'working', 5_000))
    await vi.advanceTimersByTimeAsync(4_999)
    expect(live.holds(conn)).toBe(true)
    await vi.advanceTimersByTimeAsync(1)
    expect(live.holds(conn)).toBe(false)
    expect(settled).toHaveBeenCalledTimes(1)
  })

  it(`one without news for ${LIVE_TASK_QUIET_MS / 60_000} minutes stops counting; news moves that on`, async () => {
    const live = new LiveTasks(() => {})
    live.observed(conn, 'e1', task('a', 'working'))
    await vi.advanceTimersByTimeAsync(LIVE_TASK_QUIET_MS - 1_000)
    live.observed(conn, 'e1', task('a', 'working'))
    await vi.advanceTimersByTimeAsync(LIVE_TASK_QUIET_MS - 1_000)
    expect(live.holds(conn)).toBe(true)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(live.holds(conn)).toBe(false)
  })
})
