// Many sessions over one keep-alive pool: 2026-07-28 requests are stateless,
// so a request of any session can go over any socket; only its bearer token
// differs. The views section uses it to spread calls over a hundred sessions
// without a hundred socket pools.
import { MODERN } from '../clients.js'
import { keepAliveAgent, send } from './http.js'
import { answerIn, requestBody, resultOf, snippet } from './jsonrpc.js'

/**
 * @param {string} url  the `connector` server's URL
 * @param {Record<string, string>[]} sessionHeaders  per session, what `session prepare` gives (Authorization)
 * @param {number} timeoutMs  per request
 */
export function sessionPool(url, sessionHeaders, timeoutMs) {
  const target = new URL(url)
  const agent = keepAliveAgent()
  const base = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }
  /** @type {Map<string, Record<string, string>>} per session, method and name: built once */
  const built = new Map()
  /** @param {number} s @param {string} method @param {string} [name] */
  const headersFor = (s, method, name) => {
    const key = `${s}\n${method}\n${name ?? ''}`
    let h = built.get(key)
    if (!h) {
      h = { ...base, ...sessionHeaders[s], 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method }
      if (name !== undefined) h['Mcp-Name'] = name
      built.set(key, h)
    }
    return h
  }
  let nextId = 1
  /**
   * One request as session `s`: the result, and when its answer's last byte arrived.
   * @param {number} s @param {string} method @param {string} fields @param {string} [name]
   */
  const request = async (s, method, fields, name) => {
    const id = nextId++
    const res = await send(agent, target, {
      headers: headersFor(s, method, name),
      body: requestBody(id, method, fields, true),
      timeoutMs,
    })
    const receivedAt = performance.now()
    if (res.status !== 200) throw new Error(`${method} as session ${s}: HTTP ${res.status}: ${snippet(res.text)}`)
    return { result: resultOf(answerIn(res, id), id), receivedAt }
  }
  return { request, close: () => agent.destroy() }
}
