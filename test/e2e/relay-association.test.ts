import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { conformanceConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import type { Binding } from '../support/mcp-clients.js'
import { SseRequest } from '../support/sse-request.js'
import { cleanupState, tempStateDir } from '../support/tutti.js'

/**
 * Which call a stdio upstream's request serves (relay-association.ts), with
 * a real SDK v2 server: nothing in a request over stdio names the call, and
 * the SDK asks a 2025 client the requests of one input_required round
 * concurrently, about a millisecond apart. The first makes its call wait for
 * the client; the rest must still reach that call, and not an older call of
 * the session that waits for its client too (which would hold them forever).
 */
const MODERN = '2026-07-28'
const CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} }
const ANSWERS: Record<string, unknown> = {
  'elicitation/create': { action: 'accept', content: { name: 'Ada' } },
  'sampling/createMessage': { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' },
  'roots/list': { roots: [] },
}
type Asked = { method: string; params?: Record<string, unknown> }
type Result = { resultType?: string; inputRequests?: Record<string, Asked>; requestState?: string }

describe('which call of a session a stdio upstream’s request serves', () => {
  let dir: string
  let binding: Binding
  beforeAll(async () => {
    dir = tempStateDir('relay-association')
    await installed(dir, conformanceConnector('assoc'))
    binding = (await prepared(dir, { provider: 'tutti-agent', session: 'assoc', as: 'assoc' })).mcpServers[0]!
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  let id = 1
  async function call(name: string, extra: Record<string, unknown> = {}): Promise<Result> {
    const headers = {
      ...binding.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    }
    const meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientCapabilities': CAPABILITIES,
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    }
    const params = { name, arguments: {}, _meta: meta, ...extra }
    const answer = (
      await new SseRequest(binding.url, headers, { jsonrpc: '2.0', id: id++, method: 'tools/call', params }).done()
    ).at(-1)
    expect(answer.error).toBeUndefined()
    return answer.result
  }

  it('one round’s concurrent requests all reach their own call, past an older call that waits', async () => {
    // an older call of the session, parked: its client never answers its round
    expect(await call('test_input_required_result_elicitation')).toMatchObject({ resultType: 'input_required' })
    const name = 'test_input_required_result_concurrent_inputs'
    let result = await call(name)
    const asked: string[] = []
    // however the three arrive (one round or several), the client answers each where it is asked
    for (let round = 0; round < 3 && result.resultType === 'input_required'; round++) {
      const inputResponses: Record<string, unknown> = {}
      for (const [key, request] of Object.entries(result.inputRequests ?? {})) {
        asked.push(request.method)
        // the SDK sends each with a progressToken of its own request, which names nothing to this client
        expect(request).not.toHaveProperty(['params', '_meta', 'progressToken'])
        inputResponses[key] = ANSWERS[request.method]
      }
      result = await call(name, { inputResponses, requestState: result.requestState })
    }
    expect(asked.sort()).toEqual(['elicitation/create', 'roots/list', 'sampling/createMessage'])
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'all three inputs received' }] })
  })
})
