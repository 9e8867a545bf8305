import { describe, expect, it } from 'vitest'
import { CallCancel } from '../../src/runtime/registry/call-cancel.js'

describe('CallCancel', () => {
  it('listeners run once with the reason; a listener taken back does not run; cancelling twice changes nothing', () => {
    const cancel = new CallCancel()
    const seen: unknown[] = []
    cancel.onCancel((r) => seen.push(['a', r]))
    const off = cancel.onCancel((r) => seen.push(['b', r]))
    off()
    const reason = new Error('stop')
    cancel.cancel(reason)
    cancel.cancel(new Error('again'))
    expect(seen).toEqual([['a', reason]])
    expect(cancel.cancelled).toBe(true)
    expect(cancel.reason).toBe(reason)
    // a listener added afterwards hears it at once
    cancel.onCancel((r) => seen.push(['late', r]))
    expect(seen.at(-1)).toEqual(['late', reason])
  })

  it(
    'the signal is made on first use: ' + 'aborted with the reason if the call was already cancelled, else when it is',
    () => {
      const before = new CallCancel()
      before.cancel('early')
      expect(before.signal.aborted).toBe(true)
      expect(before.signal.reason).toBe('early')
      const after = new CallCancel()
      const signal = after.signal
      expect(after.signal).toBe(signal)
      expect(signal.aborted).toBe(false)
      after.cancel('later')
      expect([signal.aborted, signal.reason]).toEqual([true, 'later'])
    },
  )

  it('following a signal: cancelled when it aborts, or at once if it already has', () => {
    const controller = new AbortController()
    const cancel = CallCancel.following(controller.signal)
    expect(cancel.cancelled).toBe(false)
    controller.abort('gone')
    expect([cancel.cancelled, cancel.reason]).toEqual([true, 'gone'])
    expect(CallCancel.following(AbortSignal.abort('x')).reason).toBe('x')
  })
})
