import { ProtocolError, SdkError, SdkErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { RawRequests, type WireTap } from '../../src/runtime/upstream/raw-requests.js'

/** A wire the test reads what was written to, and answers by hand. */
function fakeWire(fail?: Error) {
  const written: any[] = []
  let take: (message: JSONRPCMessage) => boolean = () => false
  const wire: WireTap = {
    send: async (message) => {
      if (fail) throw fail
      written.push(message)
    },
    tap: (t) => {
      take = t
    },
  }
  const answer = (message: Record<string, unknown>) => take({ jsonrpc: '2.0', ...message } as JSONRPCMessage)
  return { wire, written, answer }
}
const settle = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )

describe('RawRequests: 2026-07-28 requests past the SDK client’s codec', () => {
  it('sends the SDK client’s envelope under the request’s _meta, and hands back the result as sent', async () => {
    const { wire, written, answer } = fakeWire()
    const raw = new RawRequests(wire)
    const pending = raw.request('tools/call', { name: 'slow', _meta: { progressToken: 't' } }, { timeout: 60_000 })
    await Promise.resolve()
    const sent = written[0]
    expect(sent.id).toMatch(/^tutti-raw-\d+$/)
    expect(sent.params._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'tutti-connector-runtime', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      progressToken: 't',
    })
    const task = { resultType: 'task', taskId: 'x', status: 'working' }
    expect(answer({ id: sent.id, result: task })).toBe(true)
    expect(await pending).toEqual(task)
    // another answer to it, or one of the SDK client's own ids, is not its to take (or to pass on)
    expect(answer({ id: sent.id, result: task })).toBe(true)
    expect(answer({ id: 3, result: {} })).toBe(false)
  })

  it('an error answer fails it with the upstream’s code, message and data', async () => {
    const { wire, written, answer } = fakeWire()
    const pending = settle(new RawRequests(wire).request('tasks/get', { taskId: 'x' }, { timeout: 60_000 }))
    await Promise.resolve()
    answer({ id: written[0].id, error: { code: -32602, message: 'Task not found', data: { taskId: 'x' } } })
    const { error } = (await pending) as { error: ProtocolError }
    expect(error).toBeInstanceOf(ProtocolError)
    expect(error).toMatchObject({ code: -32602, data: { taskId: 'x' } })
    expect(error.message).toContain('Task not found')
  })

  it('a cancel tells the upstream; a timeout does the same, with the bound', async () => {
    const { wire, written } = fakeWire()
    const raw = new RawRequests(wire)
    const abort = new AbortController()
    const cancelled = settle(raw.request('tasks/get', { taskId: 'x' }, { signal: abort.signal, timeout: 60_000 }))
    await Promise.resolve()
    abort.abort(new Error('the caller went away'))
    expect(((await cancelled) as { error: Error }).error.message).toBe('the caller went away')
    expect(written[1]).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: written[0].id, reason: 'Error: the caller went away' },
    })
    const timedOut = await settle(raw.request('tasks/get', { taskId: 'y' }, { timeout: 5 }))
    expect((timedOut as { error: SdkError }).error).toMatchObject({ code: SdkErrorCode.RequestTimeout })
    expect(written[3]).toMatchObject({ method: 'notifications/cancelled', params: { requestId: written[2].id } })
    // a signal already aborted sends nothing
    const before = written.length
    await settle(raw.request('tasks/get', { taskId: 'z' }, { signal: AbortSignal.abort(), timeout: 60_000 }))
    expect(written).toHaveLength(before)
  })

  it('a closed connection fails what is in flight; a wire that cannot write fails the request', async () => {
    const { wire } = fakeWire()
    const raw = new RawRequests(wire)
    const pending = settle(raw.request('tasks/get', { taskId: 'x' }, { timeout: 60_000 }))
    await Promise.resolve()
    raw.connectionClosed()
    expect(((await pending) as { error: SdkError }).error).toMatchObject({ code: SdkErrorCode.ConnectionClosed })
    const broken = fakeWire(new SdkError(SdkErrorCode.NotConnected, 'Not connected'))
    const refused = await settle(new RawRequests(broken.wire).request('tasks/get', {}, { timeout: 60_000 }))
    expect((refused as { error: SdkError }).error).toMatchObject({ code: SdkErrorCode.NotConnected })
  })

  it('an answer with neither result nor error fails it', async () => {
    const { wire, written, answer } = fakeWire()
    const pending = settle(new RawRequests(wire).request('tasks/get', {}, { timeout: 60_000 }))
    await Promise.resolve()
    answer({ id: written[0].id, result: [] })
    expect(((await pending) as { error: SdkError }).error).toMatchObject({ code: SdkErrorCode.InvalidResult })
  })
})
