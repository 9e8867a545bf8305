import type { ServerContext } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import type { McpRequest } from '../../src/runtime/mcpserver/classify.js'
import { ClientAnswers, isJsonRpcResponse } from '../../src/runtime/mcpserver/client-answers.js'
import { exchangeAuth } from '../../src/runtime/mcpserver/exchange.js'
import { INPUT_ROUND_LIMITS, InputRounds } from '../../src/runtime/mcpserver/input-rounds.js'
import { LegacyClients, passes } from '../../src/runtime/mcpserver/legacy-clients.js'
import {
  missingCapabilities,
  narrowedTo,
  requiredCapabilities,
  withoutUpstreamToken,
  undeclaredMessage,
  type CallRelay,
} from '../../src/runtime/registry/call-relay.js'
import type { CallCancel } from '../../src/runtime/registry/call-cancel.js'
import { SessionView } from '../../src/runtime/sessions/session-view.js'
import { UPSTREAM_CLIENT_CAPABILITIES } from '../../src/runtime/upstream/call-relays.js'
import { associate } from '../../src/runtime/upstream/relay-association.js'

/** The pure parts of relaying what an upstream sends while it serves a call (server-request-relay.md). */
const relay = (session: string): CallRelay => ({ session })

describe('associate: which call a message from the upstream serves', () => {
  const a1 = relay('A')
  const a2 = relay('A')
  const b1 = relay('B')

  it('over HTTP, the call whose async context it arrived in, while that call is in flight', () => {
    expect(associate(b1, true, [a1, b1])).toEqual({ relay: b1 })
    // a context that is not (or no longer) in flight on this connection says nothing
    expect(associate(b1, true, [a1])).toEqual({ relay: a1 })
  })

  it('over stdio the context is never trusted: the one session with calls in flight, its oldest call', () => {
    expect(associate(b1, false, [a1, a2])).toEqual({ relay: a1 })
    expect(associate(undefined, false, [a2, a1])).toEqual({ relay: a2 })
  })

  it('within the session, a call waiting for its client is passed over: its upstream is most likely blocked', () => {
    let waiting = true
    const parked: CallRelay = { session: 'A', awaitingClient: () => waiting }
    expect(associate(undefined, false, [parked, a2])).toEqual({ relay: a2 })
    // all of them waiting: the oldest, as before
    expect(associate(undefined, false, [parked])).toEqual({ relay: parked })
    waiting = false
    expect(associate(undefined, false, [parked, a2])).toEqual({ relay: parked })
    // a waiting call still counts as its session's: another session is refused, never guessed
    waiting = true
    expect(associate(undefined, false, [parked, b1])).toEqual({ refused: expect.stringMatching(/several sessions/) })
  })

  it('a request that follows another with nothing sent upstream between goes where that one went', () => {
    // an SDK v2 server sends one round's requests to a 2025 client about a millisecond apart: the call asked first
    // is waiting for its client now, and an older parked call waits too; the rest of the round is still its own
    const parked: CallRelay = { session: 'A', awaitingClient: () => true }
    const asked: CallRelay = { session: 'A', awaitingClient: () => true }
    expect(associate(undefined, false, [parked, asked], asked)).toEqual({ relay: asked })
    // ahead of a free call too
    expect(associate(undefined, false, [a1, asked], asked)).toEqual({ relay: asked })
    // a burst whose call has ended says nothing; nor does it ever cross sessions
    expect(associate(undefined, false, [parked, a2], asked)).toEqual({ relay: a2 })
    expect(associate(undefined, false, [asked, b1], asked)).toEqual({ refused: expect.stringMatching(/several/) })
    // over HTTP the async context still decides
    expect(associate(a1, true, [a1, asked], asked)).toEqual({ relay: a1 })
  })

  it('several sessions, or none, in flight: refused, never guessed', () => {
    expect(associate(undefined, false, [a1, b1])).toEqual({ refused: expect.stringMatching(/several sessions/) })
    expect(associate(b1, false, [a1, b1])).toEqual({ refused: expect.stringMatching(/several sessions/) })
    expect(associate(undefined, true, [a1, a2, b1])).toEqual({ refused: expect.stringMatching(/several sessions/) })
    expect(associate(undefined, true, [])).toEqual({ refused: expect.stringMatching(/no request of any session/) })
  })
})

describe('client capabilities a request needs', () => {
  it('form and URL elicitation, sampling with tools, roots', () => {
    expect(requiredCapabilities('elicitation/create', { message: 'x' })).toEqual({ elicitation: { form: {} } })
    expect(requiredCapabilities('elicitation/create', { mode: 'url' })).toEqual({ elicitation: { url: {} } })
    expect(requiredCapabilities('sampling/createMessage', { tools: [] })).toEqual({ sampling: { tools: {} } })
    expect(requiredCapabilities('roots/list', undefined)).toEqual({ roots: {} })
  })

  it('a bare elicitation declaration is form mode only; what is missing is named', () => {
    const form = { elicitation: { form: {} } }
    const url = { elicitation: { url: {} } }
    expect(missingCapabilities(form, { elicitation: {} })).toBeUndefined()
    expect(missingCapabilities(url, { elicitation: {} })).toEqual(url)
    expect(missingCapabilities(form, { elicitation: { url: {} } })).toEqual(form)
    expect(missingCapabilities(form, undefined)).toEqual(form)
    expect(missingCapabilities({ sampling: {} }, { sampling: { tools: {} } })).toBeUndefined()
    expect(undeclaredMessage('elicitation/create', url)).toBe(
      'the client that made this call did not declare elicitation.url (needed for elicitation/create)',
    )
  })
})

describe('narrowedTo: what an upstream is told its caller can answer', () => {
  const offered = UPSTREAM_CLIENT_CAPABILITIES
  it('nothing when the caller declared all that tutti’s connection did, or more', () => {
    expect(narrowedTo(offered, { elicitation: { form: {}, url: {} }, sampling: { tools: {} }, roots: {} })).toBe(
      undefined,
    )
  })
  it('what of the connection’s the caller declared, a bare elicitation being form mode', () => {
    expect(narrowedTo(offered, { sampling: {} })).toEqual({ sampling: {} })
    expect(narrowedTo(offered, { elicitation: {}, roots: { listChanged: true } })).toEqual({
      elicitation: { form: {} },
      roots: {},
    })
    expect(narrowedTo(offered, { elicitation: { url: {} }, experimental: {} })).toEqual({ elicitation: { url: {} } })
    expect(narrowedTo(offered, {})).toEqual({})
  })
})

describe('withoutUpstreamToken: a relayed request carries none of the upstream’s own ids', () => {
  it('drops the upstream’s progressToken and keeps the rest of _meta', () => {
    const message = { message: 'm' }
    expect(withoutUpstreamToken({ ...message, _meta: { progressToken: 6 } })).toEqual(message)
    expect(withoutUpstreamToken({ ...message, _meta: { progressToken: 6, a: 1 } })).toEqual({
      ...message,
      _meta: { a: 1 },
    })
    expect(withoutUpstreamToken(message)).toBe(message)
    expect(withoutUpstreamToken(undefined)).toBeUndefined()
  })
})

describe('ClientAnswers: 2025 requests waiting for their POSTed answers', () => {
  const ask = (answers: ClientAnswers, session: string, signal = new AbortController().signal) => {
    const sent: Array<Record<string, unknown>> = []
    const answer = answers.ask(session, 'elicitation/create', { message: 'x' }, async (m) => void sent.push(m), signal)
    return { sent, answer }
  }

  it('ids are never given out twice, across requests and across daemons', () => {
    const one = new ClientAnswers()
    const two = new ClientAnswers()
    const ids = new Set<string>()
    for (let i = 0; i < 1000; i++) ids.add(one.allocate()).add(two.allocate())
    expect(ids.size).toBe(2000)
  })

  it('an answer from another session is refused and changes nothing; the session’s own is taken', async () => {
    const answers = new ClientAnswers()
    const { sent, answer } = ask(answers, 'A')
    await Promise.resolve()
    const id = sent[0]!.id
    expect(sent[0]).toMatchObject({ jsonrpc: '2.0', method: 'elicitation/create', params: { message: 'x' } })
    const response = { jsonrpc: '2.0', id, result: { action: 'accept' } }
    expect(isJsonRpcResponse(response)).toBe(true)
    expect(answers.answer('B', response)).toBe(false)
    expect(answers.size).toBe(1)
    expect(answers.answer('A', response)).toBe(true)
    await expect(answer).resolves.toEqual({ action: 'accept' })
    // answered once: a second answer finds nothing waiting
    expect(answers.answer('A', response)).toBe(false)
  })

  it('a request that cannot be written (its stream is gone) fails at once and leaves nothing waiting', async () => {
    const answers = new ClientAnswers()
    const gone = () => {
      throw new TypeError('no transport')
    }
    const signal = new AbortController().signal
    await expect(answers.ask('A', 'roots/list', undefined, gone, signal)).rejects.toThrow(/could not be sent/)
    expect(answers.size).toBe(0)
  })

  it('an error answer rejects with its code; a withdrawn request stops waiting', async () => {
    const answers = new ClientAnswers()
    const { sent, answer } = ask(answers, 'A')
    await Promise.resolve()
    answers.answer('A', { jsonrpc: '2.0', id: sent[0]!.id, error: { code: -32601, message: 'no' } })
    await expect(answer).rejects.toMatchObject({ code: -32601 })
    const withdrawn = new AbortController()
    const later = ask(answers, 'A', withdrawn.signal)
    await Promise.resolve()
    withdrawn.abort()
    await expect(later.answer).rejects.toThrow(/ended before the client answered/)
    // the client hears that its answer is no longer wanted
    expect(later.sent[1]).toMatchObject({ method: 'notifications/cancelled', params: { requestId: later.sent[0]!.id } })
    expect(answers.size).toBe(0)
  })
})

describe('InputRounds: 2026-07-28 input_required rounds of one upstream call', () => {
  const FORM = { message: 'Who?', requestedSchema: { type: 'object', properties: {} } }

  function ctx(session: string, round: { state?: unknown; inputResponses?: Record<string, unknown> } = {}) {
    return {
      mcpReq: {
        id: 1,
        method: 'tools/call',
        requestState: () => round.state,
        inputResponses: round.inputResponses,
        signal: new AbortController().signal,
        notify: async () => undefined,
      },
      http: { authInfo: exchangeAuth({ request: {} as McpRequest, session, view: SessionView.WHOLE }) },
    } as unknown as ServerContext
  }
  const sink = { notify: () => undefined, capabilities: { elicitation: {} } }
  const start = async (r: CallRelay) => {
    const answer = await r.request!('elicitation/create', FORM, new AbortController().signal)
    return { content: [{ type: 'text', text: String(answer.action) }] }
  }

  it('a state is bound to its session, refused when tampered with, and good for one retry', async () => {
    const rounds = new InputRounds()
    const first = (await rounds.serve('A', 'tools/call t', ctx('A'), sink, start)) as any
    expect(first).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicitation-1': { method: 'elicitation/create' } },
    })
    const state: string = first.requestState
    await expect(rounds.verify(state, ctx('B'))).rejects.toThrow('bind')
    // a character in the middle: the last one of base64url may carry only padding bits, which decode the same
    const at = state.length >> 1
    const tampered = `${state.slice(0, at)}${state[at] === 'A' ? 'B' : 'A'}${state.slice(at + 1)}`
    await expect(rounds.verify(tampered, ctx('A'))).rejects.toThrow()
    const decoded = await rounds.verify(state, ctx('A'))
    // verified for another session all the same (as if the bind were lost): the call is not that session's
    const foreign = ctx('B', { state: decoded, inputResponses: { 'elicitation-1': { action: 'accept' } } })
    await expect(rounds.serve('B', 'tools/call t', foreign, sink, start)).rejects.toMatchObject({ code: -32602 })
    const retry = ctx('A', { state: decoded, inputResponses: { 'elicitation-1': { action: 'accept' } } })
    await expect(rounds.serve('A', 'tools/call t', retry, sink, start)).resolves.toEqual({
      content: [{ type: 'text', text: 'accept' }],
    })
    await expect(rounds.serve('A', 'tools/call t', retry, sink, start)).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid or expired requestState',
    })
    expect(rounds.size).toBe(0)
  })

  it('a client that never answers gets INPUT_ROUND_LIMITS.maxRounds rounds, then the call is cancelled', async () => {
    const rounds = new InputRounds()
    let cancelled = false
    const waits = async (r: CallRelay, cancel: CallCancel) => {
      cancel.onCancel(() => {
        cancelled = true
      })
      await r.request!('elicitation/create', FORM, new AbortController().signal)
      return {}
    }
    let answer = (await rounds.serve('A', 'tools/call t', ctx('A'), sink, waits)) as any
    for (let round = 1; round < INPUT_ROUND_LIMITS.maxRounds; round++) {
      const state = await rounds.verify(answer.requestState, ctx('A'))
      answer = await rounds.serve('A', 'tools/call t', ctx('A', { state, inputResponses: {} }), sink, waits)
      expect(answer.resultType).toBe('input_required')
    }
    const state = await rounds.verify(answer.requestState, ctx('A'))
    await expect(rounds.serve('A', 'tools/call t', ctx('A', { state }), sink, waits)).rejects.toThrow(/rounds/)
    expect(cancelled).toBe(true)
    expect(rounds.size).toBe(0)
  })

  it('a client that did not declare the capability: the upstream gets -32021 at once, no round', async () => {
    const rounds = new InputRounds()
    const bare = { notify: () => undefined, capabilities: {} }
    await expect(rounds.serve('A', 'tools/call t', ctx('A'), bare, start)).rejects.toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    })
    expect(rounds.size).toBe(0)
  })
})

describe('LegacyClients: what a 2025 session said once', () => {
  it('a session that declared requests or set a level needs a stream; levels filter by severity', () => {
    const clients = new LegacyClients()
    clients.initialized('plain', {})
    clients.initialized('asks', { sampling: {} })
    clients.setLevel('logs', 'warning')
    expect(['plain', 'asks', 'logs', 'unknown'].map((s) => clients.needsStream(s))).toEqual([false, true, true, false])
    expect([passes('error', 'warning'), passes('info', 'warning'), passes('warning', 'warning')]).toEqual([
      true,
      false,
      true,
    ])
    clients.forget(['asks', 'logs'])
    expect(clients.needsStream('asks') || clients.needsStream('logs')).toBe(false)
  })
})
