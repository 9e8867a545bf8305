// The raw client over Streamable HTTP, in the way each era needs:
//   2026-07-28: stateless POSTs with MCP-Protocol-Version, Mcp-Method and (for
//     tools/call) Mcp-Name headers and the `_meta` envelope in the body; one
//     `server/discover` at connect, as the SDK client does. JSON (or SSE) answers.
//   2025-06-18: `initialize` (keeping the Mcp-Session-Id if the server issues
//     one), `notifications/initialized`, then POSTs with MCP-Protocol-Version
//     (and the session header); SSE (or JSON) answers. A session is ended
//     with DELETE on close.
import { MODERN } from '../clients.js'
import { keepAliveAgent, send } from './http.js'
import { answerIn, initializeFields, notificationBody, requestBody, resultOf, snippet } from './jsonrpc.js'

/**
 * @typedef {object} RawConnection
 * @property {string} negotiated
 * @property {(method: string, fields: string, name?: string) => Promise<any>} request
 *   one JSON-RPC request (`fields`: the params' members as JSON text); resolves its result, rejects on any error
 * @property {() => Promise<void>} close
 * @property {() => number} [lastBytes]  size of the last answer's HTTP body (what crossed the socket, framing included)
 * @property {() => number} [lastReceivedAt]  performance.now() when the last answer's body had fully arrived
 */

/**
 * @param {string} url
 * @param {{ era: string, headers?: Record<string, string>, timeoutMs: number }} opts
 * @returns {Promise<RawConnection>}
 */
export async function connectRawStreamable(url, { era, headers = {}, timeoutMs }) {
  const target = new URL(url)
  const agent = keepAliveAgent()
  const modern = era === MODERN
  /** @type {Record<string, string>} */
  const base = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }
  if (modern) base['MCP-Protocol-Version'] = MODERN
  /** @type {Map<string, Record<string, string>>} per (method, name): built once, reused by every call */
  const perMethod = new Map()
  /** @param {string} method @param {string} [name] */
  const headersFor = (method, name) => {
    if (!modern) return base
    const key = name === undefined ? method : `${method}\n${name}`
    let h = perMethod.get(key)
    if (!h)
      perMethod.set(
        key,
        (h =
          name === undefined ? { ...base, 'Mcp-Method': method } : { ...base, 'Mcp-Method': method, 'Mcp-Name': name }),
      )
    return h
  }
  let nextId = 1
  let lastBytes = 0
  let lastReceivedAt = 0
  /** @param {string} method @param {string} fields @param {string} [name] */
  const exchange = async (method, fields, name) => {
    const id = nextId++
    const res = await send(agent, target, {
      headers: headersFor(method, name),
      body: requestBody(id, method, fields, modern),
      timeoutMs,
    })
    // the whole body is here: what comes after (JSON.parse, checks) is the client's own work
    lastReceivedAt = performance.now()
    lastBytes = Buffer.byteLength(res.text)
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status}: ${snippet(res.text)}`)
    return { res, result: resultOf(answerIn(res, id), id) }
  }

  let negotiated = era
  /** @type {string | undefined} */
  let sessionId
  try {
    if (modern) {
      const { result } = await exchange('server/discover', '')
      if (!Array.isArray(result.supportedVersions) || !result.supportedVersions.includes(MODERN))
        throw new Error(`server/discover: ${MODERN} not supported (${JSON.stringify(result.supportedVersions)})`)
    } else {
      const { res, result } = await exchange('initialize', initializeFields(era))
      negotiated = String(result.protocolVersion)
      sessionId = res.sessionId
      base['MCP-Protocol-Version'] = negotiated
      if (sessionId) base['Mcp-Session-Id'] = sessionId
      const ack = await send(agent, target, {
        headers: base,
        body: notificationBody('notifications/initialized'),
        timeoutMs,
      })
      if (ack.status !== 202 && ack.status !== 200)
        throw new Error(`notifications/initialized: HTTP ${ack.status}: ${snippet(ack.text)}`)
    }
  } catch (err) {
    agent.destroy()
    throw err
  }

  return {
    negotiated,
    request: async (method, fields, name) => (await exchange(method, fields, name)).result,
    lastBytes: () => lastBytes,
    lastReceivedAt: () => lastReceivedAt,
    close: async () => {
      if (sessionId)
        await send(agent, target, {
          method: 'DELETE',
          headers: { ...headers, 'MCP-Protocol-Version': negotiated, 'Mcp-Session-Id': sessionId },
          timeoutMs: 5000,
        }).catch(() => {})
      agent.destroy()
    },
  }
}
