// A fake Anthropic Messages API on loopback for the real Claude Code: the
// minimal piece of test/support/fake-model-api/ (TypeScript, not importable
// from the bench's plain JS) that the agent sections need. It notes when each
// model request arrived (performance.now() of this process, the clock the
// harness starts agents by) and answers it with what `answer` returns: text
// that ends the turn, or tool_use blocks (parallel tool calls) the agent runs
// first. `answer` may return a promise, to hold a request open.
import http from 'node:http'
import { performance } from 'node:perf_hooks'

/**
 * @typedef {{ text: string } | { toolUses: { id: string, name: string, input: Record<string, unknown> }[] }} Answer
 */

/**
 * @typedef {object} ModelRequest
 * @property {number} at        performance.now() when its headers arrived
 * @property {string} path
 * @property {Record<string, string | string[] | undefined>} headers
 * @property {any} body         parsed JSON (undefined when it is not JSON)
 */

const USAGE = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

/** The tool names a Messages request offers the model. @param {ModelRequest} req @returns {string[]} */
export const toolNames = (req) =>
  Array.isArray(req.body?.tools) ? req.body.tools.map((/** @type {any} */ t) => t.name) : []

/**
 * The request's system prompt and messages as one text (where a prompt, or the names of deferred tools, are found).
 * @param {ModelRequest} req
 */
export const promptText = (req) => JSON.stringify([req.body?.system ?? null, req.body?.messages ?? null])

/** tool_result blocks of a request: the agent's answers to earlier tool calls. @param {ModelRequest} req */
export function toolResults(req) {
  const messages = Array.isArray(req.body?.messages) ? req.body.messages : []
  return messages
    .flatMap((/** @type {any} */ m) => (Array.isArray(m?.content) ? m.content : []))
    .filter((/** @type {any} */ b) => b?.type === 'tool_result')
}

/**
 * @param {http.ServerResponse} res
 * @param {{ id: string, model: string, blocks: Record<string, any>[], stopReason: string }} m
 */
function stream(res, m) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  /** @param {string} type @param {Record<string, unknown>} data */
  const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
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
  m.blocks.forEach((b, index) => {
    if (b.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } })
      event('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } })
    } else {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } })
      event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      })
    }
    event('content_block_stop', { index })
  })
  event('message_delta', { delta: { stop_reason: m.stopReason, stop_sequence: null }, usage: { output_tokens: 1 } })
  event('message_stop', {})
  res.end()
}

/**
 * @param {ModelRequest} req @param {Answer} answer @param {http.ServerResponse} res @param {number} index
 */
function writeAnswer(req, answer, res, index) {
  const model = req.body?.model ?? 'claude-fake'
  const blocks =
    'text' in answer
      ? [{ type: 'text', text: answer.text }]
      : answer.toolUses.map((u) => ({ type: 'tool_use', id: u.id, name: u.name, input: u.input }))
  const stopReason = 'text' in answer ? 'end_turn' : 'tool_use'
  const id = `msg_fake_${index}`
  if (req.body?.stream) return stream(res, { id, model, blocks, stopReason })
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(
    JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: USAGE,
    }),
  )
}

/**
 * Start the fake on 127.0.0.1 (a free port).
 * @param {(req: ModelRequest) => Answer | Promise<Answer>} answer
 */
export async function startFakeAnthropic(answer) {
  /** @type {ModelRequest[]} */
  const requests = []
  /** @type {string[]} every other request, as `METHOD path` (count_tokens, or what the fake does not serve) */
  const others = []
  /** @type {Set<(req: ModelRequest) => void>} */
  const listeners = new Set()
  const server = http.createServer((req, res) => {
    const at = performance.now()
    /** @type {Buffer[]} */
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        body = undefined // not JSON: no model request reads it
      }
      const path = req.url ?? ''
      if (req.method !== 'POST' || !/^\/v1\/messages(\?|$)/.test(path)) others.push(`${req.method} ${path}`)
      if (req.method === 'POST' && /^\/v1\/messages\/count_tokens(\?|$)/.test(path)) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ input_tokens: Math.ceil(text.length / 4) }))
        return
      }
      if (req.method !== 'POST' || !/^\/v1\/messages(\?|$)/.test(path)) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no ${path} here` } }))
        return
      }
      /** @type {ModelRequest} */
      const recorded = { at, path, headers: req.headers, body }
      requests.push(recorded)
      const index = requests.length
      for (const l of listeners) l(recorded)
      Promise.resolve()
        .then(() => answer(recorded))
        .then(
          (a) => writeAnswer(recorded, a, res, index),
          (err) => {
            res.writeHead(500, { 'content-type': 'application/json' })
            res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(err) } }))
          },
        )
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : 0
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    others,
    /** `fn` gets every model request as it arrives; returns the unsubscribe. @param {(r: ModelRequest) => void} fn */
    onRequest(fn) {
      listeners.add(fn)
      return () => listeners.delete(fn)
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(() => resolve(undefined)))
    },
  }
}

/** @typedef {Awaited<ReturnType<typeof startFakeAnthropic>>} FakeAnthropic */
