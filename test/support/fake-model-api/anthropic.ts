import type http from 'node:http'
import { FakeModelApi, requestText, type ModelApiDialect, type RecordedRequest } from './server.js'

/** What the fake model says: text that ends the turn, or a tool call the agent must run first. */
export type AnthropicAnswer =
  | { text: string }
  | { toolUse: { id: string; name: string; input: Record<string, unknown> } }

const USAGE = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

/**
 * The Anthropic Messages API as Claude Code calls it at ANTHROPIC_BASE_URL:
 * `POST /v1/messages` (streamed as SSE when `stream` is set, the way Claude
 * Code asks for turns; JSON otherwise) and `POST /v1/messages/count_tokens`.
 */
const anthropic: ModelApiDialect<AnthropicAnswer> = {
  name: 'Anthropic API',
  isModelRequest: (req) => req.method === 'POST' && /^\/v1\/messages(\?|$)/.test(req.path),
  answerOther(req, res) {
    if (req.method !== 'POST' || !/^\/v1\/messages\/count_tokens(\?|$)/.test(req.path)) return false
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ input_tokens: Math.ceil(requestText(req).length / 4) }))
    return true
  },
  writeAnswer(req, answer, res, index) {
    const model = (req.body as { model?: string })?.model ?? 'claude-fake'
    const block =
      'text' in answer
        ? { type: 'text', text: answer.text }
        : { type: 'tool_use', id: answer.toolUse.id, name: answer.toolUse.name, input: answer.toolUse.input }
    const stopReason = 'text' in answer ? 'end_turn' : 'tool_use'
    const id = `msg_fake_${index}`
    if (!(req.body as { stream?: boolean })?.stream) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [block],
          stop_reason: stopReason,
          stop_sequence: null,
          usage: USAGE,
        }),
      )
      return
    }
    streamMessage(res, { id, model, block, stopReason })
  },
}

function streamMessage(
  res: http.ServerResponse,
  m: { id: string; model: string; block: Record<string, unknown>; stopReason: string },
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  event('message_start', {
    message: {
      id: m.id,
      type: 'message',
      role: 'assistant',
      model: m.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: USAGE,
    },
  })
  if (m.block.type === 'text') {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: m.block.text } })
  } else {
    event('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: m.block.id, name: m.block.name, input: {} },
    })
    event('content_block_delta', {
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(m.block.input) },
    })
  }
  event('content_block_stop', { index: 0 })
  event('message_delta', { delta: { stop_reason: m.stopReason, stop_sequence: null }, usage: { output_tokens: 1 } })
  event('message_stop', {})
  res.end()
}

export type FakeAnthropic = FakeModelApi<AnthropicAnswer>

export function startFakeAnthropic(): Promise<FakeAnthropic> {
  return new FakeModelApi(anthropic).start()
}

/** The tools of a Messages request, by name (what the model may call). */
export function toolsOf(
  req: RecordedRequest,
): Array<{ name: string; description?: string; input_schema?: Record<string, unknown>; defer_loading?: boolean }> {
  return ((req.body as { tools?: unknown[] })?.tools ?? []) as never
}

export const toolNames = (req: RecordedRequest): string[] => toolsOf(req).map((t) => t.name)

/** The system prompt and the messages, as one text: where Claude Code lists Skills and deferred tools. */
export function promptText(req: RecordedRequest): string {
  const body = req.body as { system?: unknown; messages?: unknown }
  return JSON.stringify([body?.system ?? null, body?.messages ?? null])
}

/** The tool_result blocks a request carries (the agent's answers to earlier tool calls). */
export function toolResults(
  req: RecordedRequest,
): Array<{ tool_use_id: string; is_error?: boolean; content?: unknown }> {
  const messages = ((req.body as { messages?: Array<{ content?: unknown }> })?.messages ?? []) as Array<{
    content?: unknown
  }>
  return messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: { type?: string }) => b?.type === 'tool_result')
}
