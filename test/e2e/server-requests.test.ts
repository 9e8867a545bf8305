import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { legacyPost, type Binding } from '../support/mcp-clients.js'
import { SseRequest } from '../support/sse-request.js'
import { cleanupState, EXAMPLES, tempStateDir } from '../support/tutti.js'

/**
 * What the real `@modelcontextprotocol/server-everything` sends its client
 * while it serves a call, through tutti to the session that made the call
 * (issue 24, items 4 and 5): progress with the caller's own token, log
 * messages, and its requests (elicitation in form and URL mode, sampling),
 * in both eras: 2025-06-18 on the call's SSE stream with the answer POSTed
 * back, 2026-07-28 as input_required rounds. And what must never happen:
 * a hang for a client that cannot answer, an answer taken from another
 * session, a requestState that was tampered with or minted for another.
 */
type Era = 'legacy' | 'modern'
const ELICIT = 'everything_trigger-elicitation-request'
const URL_ELICIT = 'everything_trigger-url-elicitation'
const SAMPLE = 'everything_trigger-sampling-request'
const LONG = 'everything_trigger-long-running-operation'
const LOGGING = 'everything_toggle-simulated-logging'
const MODERN = '2026-07-28'
const LEGACY = '2025-06-18'
const CAPS = { elicitation: { form: {}, url: {} }, sampling: {} }

const text = (result: unknown): string =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n')

describe('server-to-client requests, progress and logging of a real server, to the caller', () => {
  let dir: string
  let a: Binding
  let b: Binding
  const clients: Client[] = []
  beforeAll(async () => {
    dir = tempStateDir('relay')
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: 'relay-key' } })
    a = (await prepared(dir, { session: 'relay-a' })).mcpServers[0]!
    b = (await prepared(dir, { session: 'relay-b' })).mcpServers[0]!
    // server-everything offers its elicitation and sampling tools once tutti's client declared them (initialized)
    const c = await client('legacy', a)
    await c.callTool({ name: 'everything_echo', arguments: { message: 'start' } })
    const names = await eventually(
      async () => (await c.listTools()).tools.map((t) => t.name),
      (n) => n.includes(ELICIT) && n.includes(SAMPLE),
    )
    expect(names).toEqual(expect.arrayContaining([ELICIT, URL_ELICIT, SAMPLE, LONG, LOGGING]))
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    await cleanupState(dir)
  })

  async function client(era: Era, binding: Binding, capabilities: Record<string, unknown> = {}): Promise<Client> {
    const c = new Client(
      { name: `relay-${era}`, version: '1' },
      era === 'modern'
        ? { capabilities, versionNegotiation: { mode: { pin: MODERN } } }
        : { capabilities, supportedProtocolVersions: [LEGACY] },
    )
    clients.push(c)
    if ('elicitation' in capabilities)
      c.setRequestHandler('elicitation/create', async (req) =>
        req.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: `Ada (${era})` } },
      )
    if ('sampling' in capabilities)
      c.setRequestHandler('sampling/createMessage', async (req) => ({
        model: 'fake-model',
        role: 'assistant' as const,
        content: { type: 'text' as const, text: `sampled for: ${JSON.stringify(req.params.messages[0]?.content)}` },
      }))
    await c.connect(
      new StreamableHTTPClientTransport(new URL(binding.url), { requestInit: { headers: binding.headers } }),
    )
    return c
  }

  describe.each(['legacy', 'modern'] as const)('%s era', (era) => {
    it('a long-running tool’s progress reaches the caller, in order', async () => {
      const c = await client(era, a)
      const seen: Array<{ progress: number; total?: number }> = []
      const result = await c.callTool(
        { name: LONG, arguments: { duration: 0.3, steps: 3 } },
        { onprogress: (p) => seen.push(p) },
      )
      expect(text(result)).toContain('Long running operation completed')
      expect(seen.map((p) => [p.progress, p.total])).toEqual([
        [1, 3],
        [2, 3],
        [3, 3],
      ])
    })

    it('an elicitation round trip, form mode and URL mode', async () => {
      const c = await client(era, a, CAPS)
      const form = await c.callTool({ name: ELICIT, arguments: {} })
      expect(text(form)).toContain(`Name: Ada (${era})`)
      const url = await c.callTool({ name: URL_ELICIT, arguments: { url: 'https://example.com/consent' } })
      expect(text(url)).toContain('User completed the URL elicitation flow')
    })

    it('a client that did not declare elicitation gets the error at once, the upstream is answered', async () => {
      const c = await client(era, a)
      const result = await c.callTool({ name: ELICIT, arguments: {} })
      expect(result.isError).toBe(true)
      expect(text(result)).toMatch(/did not declare elicitation/)
    })
  })

  it('the caller’s progressToken comes back, on the 2025 SSE stream and on the 2026 response stream', async () => {
    const legacy = new SseRequest(a.url, headers(a, LEGACY), {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: LONG, arguments: { duration: 0.2, steps: 2 }, _meta: { progressToken: 'mine-2025' } },
    })
    const modern = new SseRequest(
      a.url,
      { ...headers(a, MODERN), 'mcp-method': 'tools/call', 'mcp-name': LONG },
      {
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: {
          name: LONG,
          arguments: { duration: 0.2, steps: 2 },
          _meta: { ...envelope({}), progressToken: 'mine-2026' },
        },
      },
    )
    for (const [req, token, id] of [
      [legacy, 'mine-2025', 7],
      [modern, 'mine-2026', 8],
    ] as const) {
      const messages = await req.done()
      const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params)
      expect(progress).toEqual([
        { progressToken: token, progress: 1, total: 2 },
        { progressToken: token, progress: 2, total: 2 },
      ])
      expect(messages.at(-1)).toMatchObject({ id, result: { content: [{ type: 'text' }] } })
    }
  })

  it('a sampling round trip for a 2025 client', async () => {
    const c = await client('legacy', a, CAPS)
    const result = await c.callTool({ name: SAMPLE, arguments: { prompt: 'a haiku', maxTokens: 20 } })
    expect(text(result)).toContain('sampled for:')
    expect(text(result)).toContain('a haiku')
    expect(text(result)).toContain('fake-model')
  })

  it('log messages the upstream sends while serving a call reach that caller, at the level it asked for', async () => {
    // 2025-06-18: logging/setLevel, kept for the session's later requests
    const c = await client('legacy', a)
    const logged: unknown[] = []
    c.setNotificationHandler('notifications/message', (n) => void logged.push(n.params))
    await c.setLoggingLevel('debug')
    await c.callTool({ name: LOGGING, arguments: {} })
    await c.callTool({ name: LOGGING, arguments: {} })
    expect(logged.length).toBeGreaterThanOrEqual(1)
    // server-everything words its alert "Alert level-message", the others "Debug-level message" and the like
    const wording = /^[A-Z][a-z]+[- ]level[- ]message/
    expect(logged[0]).toMatchObject({ level: expect.any(String), data: expect.stringMatching(wording) })
    // 2026-07-28: the request's own logLevel
    const call = (logLevel?: string) =>
      new SseRequest(
        a.url,
        { ...headers(a, MODERN), 'mcp-method': 'tools/call', 'mcp-name': LOGGING },
        {
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: {
            name: LOGGING,
            arguments: {},
            _meta: { ...envelope({}), ...(logLevel ? { 'io.modelcontextprotocol/logLevel': logLevel } : {}) },
          },
        },
      ).done()
    const on = await call('debug')
    expect(on.filter((m) => m.method === 'notifications/message')).toHaveLength(1)
    // without a logLevel, a 2026-07-28 request gets no log message (the spec's MUST NOT)
    const off = await call()
    expect(off.filter((m) => m.method === 'notifications/message')).toEqual([])
  })

  it('2025: an elicitation answer from another session is refused; the right session’s is taken', async () => {
    await legacyPost(a, {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } },
    })
    const call = new SseRequest(a.url, headers(a, LEGACY), {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: ELICIT, arguments: {} },
    })
    const asked = await call.next((m) => m.method === 'elicitation/create')
    expect(typeof asked.id).toBe('string')
    const answer = { id: asked.id, result: { action: 'accept', content: { name: 'Grace' } } }
    const foreign = await legacyPost(b, answer, { 'mcp-protocol-version': LEGACY })
    expect(foreign.status).toBe(400)
    expect(foreign.json.error.message).toMatch(/no request of this session waits/)
    const own = await legacyPost(a, answer, { 'mcp-protocol-version': LEGACY })
    expect(own.status).toBe(202)
    const messages = await call.done()
    expect(text(messages.at(-1).result)).toContain('Name: Grace')
  })

  it('2026: a tampered or foreign requestState is refused; the right one goes on with the same call', async () => {
    const round = (binding: Binding, extra: Record<string, unknown> = {}) =>
      new SseRequest(
        binding.url,
        { ...headers(binding, MODERN), 'mcp-method': 'tools/call', 'mcp-name': ELICIT },
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: ELICIT, arguments: {}, _meta: envelope({ elicitation: { form: {} } }), ...extra },
        },
      ).done()
    const first = (await round(a)).at(-1)
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) })
    const [key, request] = Object.entries(first.result.inputRequests as Record<string, any>)[0]!
    expect(request).toMatchObject({ method: 'elicitation/create', params: { message: expect.any(String) } })
    const state: string = first.result.requestState
    const inputResponses = { [key]: { action: 'accept', content: { name: 'Hopper' } } }
    const tampered = `${state.slice(0, -2)}${state.endsWith('A') ? 'B' : 'A'}${state.slice(-1)}`
    for (const [binding, requestState] of [
      [a, tampered],
      [b, state],
    ] as const) {
      const refused = (await round(binding, { inputResponses, requestState })).at(-1)
      expect(refused.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' })
    }
    const done = (await round(a, { inputResponses, requestState: state })).at(-1)
    expect(text(done.result)).toContain('Name: Hopper')
    // a state serves one retry
    const again = (await round(a, { inputResponses, requestState: state })).at(-1)
    expect(again.error).toMatchObject({ code: -32602 })
  })

  it('a request the upstream sends while two sessions have calls in flight is declined, never guessed', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let askedA!: () => void
    const aAsked = new Promise<void>((resolve) => {
      askedA = resolve
    })
    const ca = await client('legacy', a, CAPS)
    ca.setRequestHandler('elicitation/create', async () => {
      askedA()
      await held
      return { action: 'accept', content: { name: 'A' } }
    })
    const cb = await client('legacy', b, CAPS)
    let bAsked = false
    cb.setRequestHandler('elicitation/create', async () => {
      bAsked = true
      return { action: 'accept', content: { name: 'B' } }
    })
    const first = ca.callTool({ name: ELICIT, arguments: {} })
    await aAsked
    const second = await cb.callTool({ name: ELICIT, arguments: {} })
    expect(second.isError).toBe(true)
    expect(text(second)).toMatch(/several sessions are in flight/)
    expect(bAsked).toBe(false)
    release()
    expect(text(await first)).toContain('Name: A')
  })
})

function headers(binding: Binding, version: string): Record<string, string> {
  return {
    ...binding.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': version,
  }
}

function envelope(capabilities: Record<string, unknown>): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  }
}
