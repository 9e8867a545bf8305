import { ProtocolError as ClientProtocolError } from '@modelcontextprotocol/client'
import { describe, expect, it, vi } from 'vitest'
import { ErrorCodes, TuttiError } from '../../src/runtime/errors.js'
import { LegacyCancellation } from '../../src/runtime/mcpserver/legacy-cancellation.js'
import { CallCancel } from '../../src/runtime/registry/call-cancel.js'
import { UpstreamInputRequired } from '../../src/runtime/registry/call-relay.js'
import { answerOrThrow, ToolService, type ToolOutcome } from '../../src/runtime/mcpserver/tool-service.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { RouteClient, ToolCallResult } from '../../src/runtime/registry/route.js'

const TOOL = [{ name: 't', inputSchema: { type: 'object' } }]
const quiet = new AbortController().signal

function service(callTool: RouteClient['callTool']) {
  const registry = new ConnectorMCPRegistry()
  const cancellation = new LegacyCancellation()
  registry.commit(buildRoute('k', 1, { callTool }, TOOL))
  return { registry, cancellation, tools: new ToolService(registry, cancellation) }
}

const errorOf = (o: ToolOutcome) =>
  o.ok || o.error instanceof UpstreamInputRequired
    ? undefined
    : { code: o.error.code, message: o.error.message, data: o.error.data }

describe('ToolService.call', () => {
  it('an unknown tool is -32602 naming it', async () => {
    const { tools } = service(async () => ({ content: [] }))
    expect(errorOf(await tools.call(undefined, 'k_nope', {}, { signal: quiet }))).toEqual({
      code: -32602,
      message: 'unknown tool "k_nope"',
      data: undefined,
    })
  })

  it('calls the upstream by its own name and passes the result through', async () => {
    const seen: unknown[] = []
    const { tools, registry } = service(
      async (name, args) => (seen.push([name, args]), { content: [{ type: 'text', text: 'ok' }], isError: false }),
    )
    const outcome = await tools.call(registry.resolve('k_t'), 'k_t', { a: 1 }, { signal: quiet })
    expect(outcome).toEqual({
      ok: true,
      result: { content: [{ type: 'text', text: 'ok' }], isError: false },
      connector: 'k',
    })
    expect(seen).toEqual([['t', { a: 1 }]])
  })

  it('a binding fenced by a removal does not dispatch; one replaced by a newer generation does', async () => {
    let calls = 0
    const { tools, registry } = service(async () => (calls++, { content: [] }))
    const old = registry.resolve('k_t')!
    registry.commit(buildRoute('k', 2, { callTool: async () => (calls++, { content: [] }) }, TOOL))
    expect((await tools.call(old, 'k_t', {}, { signal: quiet })).ok).toBe(true)
    registry.remove('k', 2)
    const fenced = errorOf(await tools.call(old, 'k_t', {}, { signal: quiet }))
    expect(fenced).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/no longer available: connector "k" was removed/),
      data: { connector: 'k' },
    })
    expect(calls).toBe(1)
  })

  it('an upstream JSON-RPC error passes through; any other failure is a -32603 naming the connector', async () => {
    const failures: Array<[unknown, unknown]> = [
      [
        new ClientProtocolError(-32602, 'bad args', { field: 'x' }),
        { code: -32602, message: 'bad args', data: { field: 'x' } },
      ],
      [Object.assign(new Error('custom'), { code: -32099, data: 1 }), { code: -32099, message: 'custom', data: 1 }],
      [
        new Error('the pipe broke'),
        { code: -32603, message: 'connector "k": the pipe broke', data: { connector: 'k' } },
      ],
      [
        new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'connector "k" is restarting'),
        { code: -32603, message: 'connector "k" is restarting', data: { connector: 'k' } },
      ],
      [
        Object.assign(new Error('positive codes are not JSON-RPC'), { code: 7 }),
        { code: -32603, message: 'connector "k": positive codes are not JSON-RPC', data: { connector: 'k' } },
      ],
    ]
    for (const [thrown, expected] of failures) {
      const { tools, registry } = service(async () => Promise.reject(thrown))
      expect(errorOf(await tools.call(registry.resolve('k_t'), 'k_t', {}, { signal: quiet }))).toEqual(expected)
    }
  })

  it('the signal cancels the upstream call', async () => {
    let aborted = false
    const { tools, registry } = service(
      (_n, _a, { signal }) =>
        new Promise<ToolCallResult>((_resolve, reject) =>
          signal?.addEventListener('abort', () => {
            aborted = true
            reject(new Error('aborted'))
          }),
        ),
    )
    const gone = new AbortController()
    const pending = tools.call(registry.resolve('k_t'), 'k_t', {}, { signal: gone.signal })
    gone.abort()
    expect((await pending).ok).toBe(false)
    expect(aborted).toBe(true)
  })

  it('a 2025 call is cancelled by its session and request id, and leaves nothing registered', async () => {
    let release: (() => void) | undefined
    const { tools, registry, cancellation } = service(
      (_n, _a, { signal }) =>
        new Promise<ToolCallResult>((resolve, reject) => {
          release = () => resolve({ content: [] })
          signal?.addEventListener('abort', () => reject(signal.reason))
        }),
    )
    const pending = tools.call(
      registry.resolve('k_t'),
      'k_t',
      {},
      { signal: quiet, legacy: { session: 'hash-1', id: 7 } },
    )
    expect(cancellation.size).toBe(1)
    expect(cancellation.cancel('hash-2', 7, 'not yours')).toBe(false)
    expect(cancellation.cancel('hash-1', '7', 'another id type')).toBe(false)
    expect(cancellation.cancel('hash-1', 7, 'cancelled by the client')).toBe(true)
    expect(errorOf(await pending)).toMatchObject({ code: -32603, message: 'connector "k": cancelled by the client' })
    expect(cancellation.size).toBe(0)
    const done = tools.call(registry.resolve('k_t'), 'k_t', {}, { signal: quiet, legacy: { session: 'hash-1', id: 8 } })
    release!()
    expect((await done).ok).toBe(true)
    expect(cancellation.size).toBe(0)
  })

  it(
    'a route client that listens to the cancel gets no AbortSignal made for it, in either era, and a 2025 cancel ' +
      'still reaches it',
    async () => {
      let signalsRead = 0
      let cancelledWith: unknown
      let release: (() => void) | undefined
      const { tools, registry, cancellation } = service(
        (_n, _a, options) =>
          new Promise<ToolCallResult>((resolve, reject) => {
            release = () => resolve({ content: [] })
            options.cancel!.onCancel((reason) => {
              cancelledWith = reason
              reject(reason)
            })
          }),
      )
      // the options object counts reads of its signal
      const call = (legacy?: { session: string; id: unknown }) => {
        const cancel = new CallCancel()
        const options = { cancel, ...(legacy ? { legacy } : {}) }
        const pending = tools.call(registry.resolve('k_t'), 'k_t', {}, options)
        return { cancel, pending }
      }
      const spy = vi.spyOn(CallCancel.prototype, 'signal', 'get').mockImplementation(function (this: CallCancel) {
        signalsRead++
        return new AbortController().signal
      })
      try {
        const plain = call()
        release!()
        expect((await plain.pending).ok).toBe(true)
        const legacy = call({ session: 'hash-1', id: 9 })
        expect(cancellation.cancel('hash-1', 9, 'cancelled by the client')).toBe(true)
        expect(errorOf(await legacy.pending)).toMatchObject({
          code: -32603,
          message: 'connector "k": cancelled by the client',
        })
        expect((cancelledWith as Error).message).toBe('cancelled by the client')
        expect(signalsRead).toBe(0)
        expect(cancellation.size).toBe(0)
      } finally {
        spy.mockRestore()
      }
    },
  )

  it("an upstream's own serverInfo is taken out of the result's _meta, keeping the key order", async () => {
    const SI = 'io.modelcontextprotocol/serverInfo'
    const results: Array<[ToolCallResult, unknown]> = [
      [
        { _meta: { a: 1, [SI]: { name: 'up', version: '1' } }, content: [], isError: true },
        { _meta: { a: 1 }, content: [], isError: true },
      ],
      [{ _meta: { [SI]: { name: 'up', version: '1' } }, content: [] }, { content: [] }],
      [
        { _meta: { a: 1 }, content: [] },
        { _meta: { a: 1 }, content: [] },
      ],
    ]
    for (const [result, expected] of results) {
      const { tools, registry } = service(async () => result)
      const outcome = await tools.call(registry.resolve('k_t'), 'k_t', {}, { signal: quiet })
      expect(outcome.ok && JSON.stringify(outcome.result)).toBe(JSON.stringify(expected))
    }
  })
})

describe('ToolService.list', () => {
  it('serves every tool on one page; a cursor is one it never gave out', () => {
    const { tools } = service(async () => ({ content: [] }))
    expect(tools.list()).toEqual({ tools: [{ name: 'k_t', inputSchema: { type: 'object' } }] })
    expect(() => tools.list('x')).toThrow(/unknown cursor "x"/)
    expect(tools.snapshot()).toBe(tools.snapshot())
  })
})

describe('answerOrThrow', () => {
  it('returns a result, throws an error, and fails a result JSON cannot carry before the SDK serializes it', () => {
    expect(answerOrThrow({ ok: true, result: { content: [] }, connector: 'k' })).toEqual({ content: [] })
    const error = new ClientProtocolError(-32602, 'bad')
    expect(() => answerOrThrow({ ok: false, error })).toThrow(error)
    let deep: unknown = 'bottom'
    for (let i = 0; i < 10_000; i++) deep = { deep }
    expect(() =>
      answerOrThrow({
        ok: true,
        result: { content: [], structuredContent: deep as Record<string, unknown> },
        connector: 'k',
      }),
    ).toThrow(/^connector "k": the tool result could not be serialized/)
  })
})
