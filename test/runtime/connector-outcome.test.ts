import { describe, expect, it } from 'vitest'
import { expectOutcome, OUTCOME_WAIT_MS } from '../../src/runtime/client/connector-outcome.js'
import { UPSTREAM_LIMITS } from '../../src/runtime/upstream/upstream-connection.js'

describe('what install and connect wait for', () => {
  it('waits longer than a start may take by default, so that a timed-out start is told with its reason', () => {
    // the spawn (an npx install, a cold node) comes before the start's own bound runs out
    expect(OUTCOME_WAIT_MS - UPSTREAM_LIMITS.connectTimeoutMs).toBeGreaterThanOrEqual(10_000)
  })

  it('a start still under way when the wait ends says how long it waited and what it was doing', () => {
    const state = { key: 'mute', status: 'starting', reason: 'starting the MCP server' } as never
    expect(() => expectOutcome('installed mute 1.0.0', state, { wait: true, timeoutMs: OUTCOME_WAIT_MS })).toThrow(
      'installed mute 1.0.0, but it was not ready within 45 s: starting the MCP server (it keeps trying; ' +
        'see `tutti daemon status`)',
    )
  })
})
