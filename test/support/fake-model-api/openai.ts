import { FakeModelApi, type ModelApiDialect, type RecordedRequest } from './server.js'

/** Text that ends the turn, or a function call (`namespace` for a tool Codex sent inside a namespace). */
export type ResponsesAnswer =
  | { text: string }
  | { functionCall: { callId: string; name: string; namespace?: string; arguments: Record<string, unknown> } }

/**
 * The OpenAI Responses API as Codex calls it through a `model_providers`
 * entry with `wire_api = "responses"` (the only wire API Codex 0.171 takes):
 * `POST <base_url>/responses`, answered as the SSE stream Codex reads.
 */
const responses: ModelApiDialect<ResponsesAnswer> = {
  name: 'OpenAI Responses API',
  isModelRequest: (req) => req.method === 'POST' && /\/responses(\?|$)/.test(req.path),
  writeAnswer(_req, answer, res, index) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const event = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
    const id = `resp_fake_${index}`
    event('response.created', { response: { id } })
    const item = 'text' in answer ? message(index, answer.text) : call(index, answer.functionCall)
    event('response.output_item.added', {
      output_index: 0,
      item: 'text' in answer ? { ...item, content: [] } : { ...item, arguments: '' },
    })
    if ('text' in answer)
      event('response.output_text.delta', { output_index: 0, content_index: 0, item_id: item.id, delta: answer.text })
    else event('response.function_call_arguments.delta', { output_index: 0, item_id: item.id, delta: item.arguments })
    event('response.output_item.done', { output_index: 0, item })
    event('response.completed', {
      response: {
        id,
        usage: {
          input_tokens: 1,
          input_tokens_details: null,
          output_tokens: 1,
          output_tokens_details: null,
          total_tokens: 2,
        },
      },
    })
    res.end()
  },
}

function message(index: number, text: string) {
  return {
    type: 'message',
    role: 'assistant',
    id: `msg_fake_${index}`,
    content: [{ type: 'output_text', text, annotations: [] }],
  } as Record<string, unknown> & { id: string }
}

function call(
  index: number,
  c: { callId: string; name: string; namespace?: string; arguments: Record<string, unknown> },
) {
  return {
    type: 'function_call',
    id: `fc_fake_${index}`,
    call_id: c.callId,
    name: c.name,
    ...(c.namespace ? { namespace: c.namespace } : {}),
    arguments: JSON.stringify(c.arguments),
  } as Record<string, unknown> & { id: string; arguments: string }
}

export type FakeOpenAI = FakeModelApi<ResponsesAnswer>

export function startFakeOpenAI(): Promise<FakeOpenAI> {
  return new FakeModelApi(responses).start()
}

interface ToolSpec {
  type: string
  name?: string
  description?: string
  parameters?: Record<string, unknown>
  tools?: ToolSpec[]
}

/** The functions of a Responses request by namespace ('' for top-level functions). */
export function functionsOf(req: RecordedRequest): Map<string, ToolSpec[]> {
  const out = new Map<string, ToolSpec[]>()
  for (const t of ((req.body as { tools?: ToolSpec[] })?.tools ?? []) as ToolSpec[]) {
    if (t.type === 'namespace') out.set(t.name ?? '', [...(out.get(t.name ?? '') ?? []), ...(t.tools ?? [])])
    else if (t.type === 'function') out.set('', [...(out.get('') ?? []), t])
  }
  return out
}

/** The function names inside one namespace (Codex puts an MCP server's tools in `mcp__<server>`). */
export const namespaceFunctions = (req: RecordedRequest, namespace: string): string[] =>
  (functionsOf(req).get(namespace) ?? []).map((t) => t.name ?? '')

/** Every input text of a Responses request (developer and user messages): where Codex lists Skills. */
export function inputText(req: RecordedRequest): string {
  const input = ((req.body as { input?: Array<{ content?: Array<{ text?: string }> }> })?.input ?? []) as Array<{
    content?: Array<{ text?: string }>
  }>
  return input.flatMap((m) => (Array.isArray(m.content) ? m.content.map((c) => c.text ?? '') : [])).join('\n')
}
