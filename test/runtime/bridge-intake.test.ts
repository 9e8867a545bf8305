import { PassThrough, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { BRIDGE_LIMITS } from '../../src/runtime/http-surface/http-limits.js'
import { Intake } from '../../src/runtime/bridge/intake.js'
import type { Line } from '../../src/runtime/bridge/line-splitter.js'
import { StdoutBacklog } from '../../src/runtime/bridge/stdout-backlog.js'

const line = (text: string): Line => ({ kind: 'line', bytes: Buffer.from(text) })

/** An intake over a stdin that records pause/resume, a stdout that holds writes until `drain()`, and a fake load. */
function harness() {
  const input = new PassThrough()
  const held: Array<() => void> = []
  const output = new Writable({ highWaterMark: 16, write: (_chunk, _enc, done) => void held.push(done) })
  const load = { inFlight: 0, inFlightBytes: 0 }
  const taken: string[] = []
  const logs: string[] = []
  const intake = new Intake({
    input,
    backlog: new StdoutBacklog(output),
    load,
    take: (l) => {
      taken.push(l.kind === 'line' ? l.bytes.toString() : '<oversized>')
      load.inFlight++
      load.inFlightBytes += l.kind === 'line' ? l.bytes.length : 0
    },
    log: (l) => logs.push(l),
  })
  const settle = (bytes = 1): void => {
    load.inFlight--
    load.inFlightBytes -= bytes
    intake.flow()
  }
  const drain = (): void => {
    while (held.length) held.shift()!()
  }
  return { input, output, load, taken, logs, intake, settle, drain }
}

describe('Intake', () => {
  it('up to the cap in flight, then stdin paused; each settled one lets the next through, in order', async () => {
    const h = harness()
    const cap = BRIDGE_LIMITS.requestsInFlight
    h.intake.push(Array.from({ length: cap + 3 }, (_, i) => line(String(i))))
    expect(h.taken).toHaveLength(cap)
    expect(h.input.isPaused()).toBe(true)
    let idle = false
    void h.intake.idle().then(() => (idle = true))
    h.settle()
    expect(h.taken.at(-1)).toBe(String(cap))
    // new lines queue behind the waiting ones
    h.intake.push([line('late')])
    h.settle()
    h.settle()
    h.settle()
    expect(h.taken.slice(cap)).toEqual([String(cap), String(cap + 1), String(cap + 2), 'late'])
    // still at the cap: stdin stays paused until one more settles
    expect(h.input.isPaused()).toBe(true)
    h.settle()
    expect(h.input.isPaused()).toBe(false)
    expect(idle).toBe(false)
    for (let i = 1; i < cap; i++) h.settle()
    await Promise.resolve()
    expect(idle).toBe(true)
  })

  it('a request larger than the byte budget goes alone; the next waits for it', () => {
    const h = harness()
    const big = 'x'.repeat(BRIDGE_LIMITS.requestBytesInFlight + 1)
    h.intake.push([line(big), line('small')])
    expect(h.taken).toEqual([big])
    expect(h.input.isPaused()).toBe(true)
    h.settle(big.length)
    expect(h.taken).toEqual([big, 'small'])
  })

  it('unread answers past the mark stop the intake until stdout drains, whatever is in flight', () => {
    const h = harness()
    h.output.write('y'.repeat(BRIDGE_LIMITS.unreadAnswerBytes + 1))
    h.intake.push([line('a')])
    expect(h.taken).toEqual([])
    expect(h.input.isPaused()).toBe(true)
    h.drain()
    expect(h.taken).toEqual(['a'])
    expect(h.input.isPaused()).toBe(false)
    expect(h.logs).toEqual([])
    h.intake.close()
  })
})
