import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeConnector } from '../support/connector-fixture.js'
import { installed, prepared } from '../support/in-process.js'
import type { Binding } from '../support/mcp-clients.js'
import { listeningPort } from '../support/listening-port.js'
import { SseRequest } from '../support/sse-request.js'
import { cleanupState, REPO, tempStateDir } from '../support/tutti.js'

/**
 * A remote upstream of the 2026-07-28 era asks its client through
 * input_required, which tutti's SDK client fulfils inside the call: the
 * request reaches the caller by the call's own async context, so two
 * sessions with calls in flight on one connection each get their own
 * (where a stdio upstream's request would be declined). Its progress comes
 * back with the caller's token, its log messages at the caller's level.
 */
const MODERN = '2026-07-28'
const LEGACY = '2025-06-18'
type Era = 'legacy' | 'modern'

const text = (result: unknown): string =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n')

describe('server requests of a 2026-07-28 remote upstream, to the caller', () => {
  let dir: string
  let server: ChildProcess
  let a: Binding
  let b: Binding
  const clients: Client[] = []
  beforeAll(async () => {
    server = spawn(process.execPath, [path.join(REPO, 'test/fixtures/input-required-server.mjs')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const port = await listeningPort(server, 'the input_required fixture')
    dir = tempStateDir('relay-http')
    await installed(
      dir,
      makeConnector({
        schemaVersion: 1,
        key: 'ask',
        name: 'Ask',
        version: '1.0.0',
        description: 'Asks its client through input_required',
        auth: { kind: 'none' },
        mcp: { transport: 'http', url: `http://127.0.0.1:${port}/mcp` },
      }),
    )
    a = (await prepared(dir, { session: 'http-a' })).mcpServers[0]!
    b = (await prepared(dir, { session: 'http-b' })).mcpServers[0]!
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    server?.kill()
    await cleanupState(dir)
  })

  async function client(era: Era, binding: Binding, answer?: (era: Era) => Promise<string>): Promise<Client> {
    const c = new Client(
      { name: `http-${era}`, version: '1' },
      era === 'modern'
        ? { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } }
        : { capabilities: { elicitation: { form: {} } }, supportedProtocolVersions: [LEGACY] },
    )
    clients.push(c)
    c.setRequestHandler('elicitation/create', async () => ({
      action: 'accept',
      content: { name: answer ? await answer(era) : `named over ${era}` },
    }))
    await c.connect(
      new StreamableHTTPClientTransport(new URL(binding.url), { requestInit: { headers: binding.headers } }),
    )
    return c
  }

  it.each(['legacy', 'modern'] as const)(
    '%s caller: the upstream’s input_required reaches it and returns',
    async (era) => {
      const c = await client(era, a)
      expect(text(await c.callTool({ name: 'ask_confirm', arguments: {} }))).toBe(`accept: named over ${era}`)
    },
  )

  it.each(['legacy', 'modern'] as const)(
    '%s caller: the upstream is told what it can answer, where it is less than tutti’s connection declared',
    async (era) => {
      // the caller declared form elicitation only; tutti's connection declares URL mode, sampling and roots too
      const c = await client(era, b)
      expect(JSON.parse(text(await c.callTool({ name: 'ask_declared', arguments: {} })))).toEqual({
        elicitation: { form: {} },
      })
    },
  )

  it('two sessions with calls in flight on one connection: each request goes to its own caller', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let asked!: () => void
    const aAsked = new Promise<void>((resolve) => {
      asked = resolve
    })
    const ca = await client('legacy', a, async () => {
      asked()
      await held
      return 'A'
    })
    const cb = await client('modern', b, async () => 'B')
    const first = ca.callTool({ name: 'ask_confirm', arguments: {} })
    await aAsked
    expect(text(await cb.callTool({ name: 'ask_confirm', arguments: {} }))).toBe('accept: B')
    release()
    expect(text(await first)).toBe('accept: A')
  })

  it('progress with the caller’s token and log messages at its level, through a 2026-07-28 upstream', async () => {
    const messages = await new SseRequest(
      a.url,
      {
        ...a.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': LEGACY,
      },
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'ask_steps', arguments: { steps: 2 }, _meta: { progressToken: 42 } },
      },
    ).done()
    expect(messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params)).toEqual([
      { progressToken: 42, progress: 1, total: 2 },
      { progressToken: 42, progress: 2, total: 2 },
    ])
    // this 2025 session set no log level: it gets none
    expect(messages.filter((m) => m.method === 'notifications/message')).toEqual([])
    expect(text(messages.at(-1).result)).toBe('2 steps done')

    const steps = await new SseRequest(
      b.url,
      {
        ...b.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'ask_steps',
      },
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: {
          name: 'ask_steps',
          arguments: { steps: 2 },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/logLevel': 'info',
          },
        },
      },
    ).done()
    expect(steps.filter((m) => m.method === 'notifications/message').map((m) => m.params)).toEqual([
      { level: 'info', logger: 'steps', data: 'step 1 of 2' },
      { level: 'info', logger: 'steps', data: 'step 2 of 2' },
    ])
  })
})
