// Hand-built JSON-RPC bodies (string templates, no objects serialized per
// call except the message itself) and minimal reading of the answers.
import { MODERN } from '../clients.js'
import { sseEvents } from './sse.js'

const CLIENT_INFO = '{"name":"bench","version":"1"}'
/** The 2026-07-28 `_meta` envelope every modern request carries. */
const ENVELOPE =
  `"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}",` +
  `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":${CLIENT_INFO}}`

/**
 * @param {number} id
 * @param {string} method
 * @param {string} fields  the params' members as JSON text without braces ('' for none)
 * @param {boolean} modern  add the `_meta` envelope
 */
export function requestBody(id, method, fields, modern) {
  const params = modern ? (fields ? `{${fields},${ENVELOPE}}` : `{${ENVELOPE}}`) : `{${fields}}`
  return `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`
}

/** @param {string} method */
export const notificationBody = (method) => `{"jsonrpc":"2.0","method":"${method}"}`

/** `initialize` params (2025 era). @param {string} version */
export const initializeFields = (version) =>
  `"protocolVersion":"${version}","capabilities":{},"clientInfo":${CLIENT_INFO}`

/**
 * `tools/call` params of the echo tool.
 * @param {string} toolJson  the tool name, JSON-encoded
 * @param {string} message
 */
export const echoFields = (toolJson, message) => `"name":${toolJson},"arguments":{"message":${JSON.stringify(message)}}`

/** @param {string} text */
export const snippet = (text) => text.replace(/\s+/g, ' ').trim().slice(0, 200)

/**
 * The JSON-RPC message answering `id` in a POST's body: the JSON object, or
 * the first SSE `message` event carrying that id.
 * @param {import('./http.js').HttpAnswer} res
 * @param {number} id
 */
export function answerIn(res, id) {
  if (res.contentType.startsWith('application/json')) return JSON.parse(res.text)
  if (res.contentType.startsWith('text/event-stream')) {
    for (const e of sseEvents(res.text)) {
      if (e.event !== 'message') continue
      const msg = JSON.parse(e.data)
      if (msg.id === id) return msg
    }
    throw new Error(`no answer to request ${id} in the SSE response: ${snippet(res.text)}`)
  }
  throw new Error(`unexpected content-type "${res.contentType}": ${snippet(res.text)}`)
}

/**
 * The result of a JSON-RPC response, or throw its error.
 * @param {any} msg
 * @param {number} id
 */
export function resultOf(msg, id) {
  if (msg?.id !== id) throw new Error(`answer has id ${JSON.stringify(msg?.id)}, expected ${id}`)
  if (msg.error) throw new Error(`JSON-RPC error ${msg.error.code}: ${msg.error.message}`)
  if (!msg.result || typeof msg.result !== 'object')
    throw new Error(`answer without a result: ${snippet(JSON.stringify(msg))}`)
  return msg.result
}

/**
 * Throw unless `result` is the echo tool's answer to `message`.
 * @param {any} result
 * @param {string} message
 */
export function checkEcho(result, message) {
  const first = Array.isArray(result.content) ? result.content[0] : undefined
  if (result.isError || first?.type !== 'text' || first.text !== `Echo: ${message}`)
    throw new Error(`unexpected echo result: ${snippet(JSON.stringify(result))}`)
}
