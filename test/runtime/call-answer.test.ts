import {
  Client,
  InMemoryTransport,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerKind, isCanonicalCallResult } from '../../src/runtime/upstream/call-answer.js'

// The two decisions a direct tools/call makes without the SDK client's
// schemas, against the SDK's own verdicts: how an answer is routed, and
// whether a result comes out of the SDK's decoding exactly as it went in.

describe('answerKind routes as the SDK Protocol does', () => {
  const messages: unknown[] = [
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 'a', result: { content: [] } },
    { jsonrpc: '2.0', id: 1.5, result: {} },
    { jsonrpc: '2.0', id: null, result: {} },
    { jsonrpc: '2.0', result: {} },
    { jsonrpc: '2.0', id: 1, result: [] },
    { jsonrpc: '2.0', id: 1, result: null },
    { jsonrpc: '2.0', id: 1, result: 'x' },
    { jsonrpc: '2.0', id: 1, result: { _meta: null } },
    { jsonrpc: '2.0', id: 1, result: { _meta: [] } },
    { jsonrpc: '2.0', id: 1, result: { _meta: { 'io.modelcontextprotocol/serverInfo': 5 } } },
    { jsonrpc: '2.0', id: 1, result: {}, extra: 1 },
    { jsonrpc: '2.0', id: 1, result: {}, method: 'x' },
    { jsonrpc: '1.0', id: 1, result: {} },
    { id: 1, result: {} },
    { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'm' } },
    { jsonrpc: '2.0', error: { code: -1, message: 'm' } },
    { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'm', data: null, other: 1 } },
    { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } },
    { jsonrpc: '2.0', id: 1, error: { code: -1 } },
    { jsonrpc: '2.0', id: 1, error: { code: '-1', message: 'm' } },
    { jsonrpc: '2.0', id: 1, error: null },
    { jsonrpc: '2.0', id: 1, error: [] },
    { jsonrpc: '2.0', id: 1.5, error: { code: -1, message: 'm' } },
    { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'm' }, result: {} },
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/x' },
  ]
  it.each(messages.map((m) => [JSON.stringify(m), m]))('%s', (_label, message) => {
    const sdk = isJSONRPCResultResponse(message) ? 'result' : isJSONRPCErrorResponse(message) ? 'error' : 'other'
    expect(answerKind(message as JSONRPCMessage)).toBe(sdk)
  })
})

describe('a canonical result is what the SDK decodes it to', () => {
  // a minimal server on an in-memory pair: initialize as a 2025-11-25 server, tools/call answered from `next`
  let client: Client
  let next: unknown
  beforeAll(async () => {
    const [mine, theirs] = InMemoryTransport.createLinkedPair()
    theirs.onmessage = (m) => {
      const msg = m as { id?: number; method?: string }
      if (msg.method === 'initialize')
        void theirs.send({
          jsonrpc: '2.0',
          id: msg.id!,
          result: {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 's', version: '1' },
          },
        })
      else if (msg.method === 'tools/call')
        void theirs.send({ jsonrpc: '2.0', id: msg.id!, result: next } as JSONRPCMessage)
    }
    await theirs.start()
    client = new Client({ name: 'c', version: '1' })
    await client.connect(mine)
  })
  afterAll(async () => {
    await client.close()
  })

  async function decoded(result: unknown): Promise<string> {
    next = structuredClone(result)
    try {
      return JSON.stringify(await client.callTool({ name: 't' }))
    } catch (err) {
      return `throws ${(err as Error).message}`
    }
  }

  // every combination of these parts, in both key orders where order could matter
  const metas = [
    undefined,
    {},
    { a: 1 },
    { 'io.modelcontextprotocol/serverInfo': { name: 'u', version: '1' } },
    { progressToken: 1 },
    { b: 1, 'io.modelcontextprotocol/related-task': { taskId: 't' } },
  ]
  const contents = [
    undefined,
    [],
    [{ type: 'text', text: 'x' }],
    [{ text: 'x', type: 'text' }],
    [{ type: 'text', text: 'x', annotations: {} }],
    [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    [{ type: 'text', text: 1 }],
    'x',
  ]
  const structured = [undefined, {}, { z: 1, a: [1, { b: null }] }, [1], 'x', null]
  const errors = [undefined, true, false, 'yes']
  const results: Array<Record<string, unknown>> = []
  for (const meta of metas)
    for (const content of contents)
      for (const sc of structured)
        for (const isError of errors) {
          const r: Record<string, unknown> = {}
          if (meta !== undefined) r._meta = meta
          if (content !== undefined) r.content = content
          if (sc !== undefined) r.structuredContent = sc
          if (isError !== undefined) r.isError = isError
          results.push(r)
          // the same keys reversed
          results.push(Object.fromEntries(Object.entries(r).reverse()))
        }

  it(
    `over ${results.length} results: ` + `every one called canonical comes back unchanged, and some are not canonical`,
    async () => {
      let canonical = 0
      for (const r of results) {
        if (!isCanonicalCallResult(r)) continue
        canonical++
        expect(await decoded(r), JSON.stringify(r)).toBe(JSON.stringify(r))
      }
      expect(canonical).toBeGreaterThan(50)
      expect(canonical).toBeLessThan(results.length)
    },
  )

  it('a few that are not canonical really change (or fail) in the SDK’s hands', async () => {
    for (const r of [
      { isError: false, content: [] },
      { content: [{ text: 'x', type: 'text' }] },
      { _meta: { a: 2, progressToken: 1 }, content: [] },
      { structuredContent: {} },
      { content: [], resultType: 'complete' },
    ]) {
      expect(isCanonicalCallResult(r)).toBe(false)
      expect(await decoded(r), JSON.stringify(r)).not.toBe(JSON.stringify(r))
    }
  })
})
