// HTTP plumbing for the raw client: one request on a keep-alive connection
// (status, two headers and the whole body as text), and a long-lived GET
// whose body is handed over chunk by chunk (the HTTP+SSE transport's stream).
// Requests go over wire.js (node:net) unless BENCH_RAW_HTTP=node asks for
// node:http's Agent, the client the bench used before (kept to compare).
import http from 'node:http'
import { WirePool } from './wire.js'

const NODE_HTTP = process.env.BENCH_RAW_HTTP === 'node'

/** Which HTTP client the raw client's requests use, for the report. */
export const RAW_HTTP = NODE_HTTP ? "node:http's Agent" : 'node:net, keep-alive, one write per request (raw/wire.js)'

/**
 * One per raw connection; connections are reused across calls.
 * @returns {{ destroy: () => void, pool?: (url: URL) => WirePool, agent?: http.Agent }}
 */
export function keepAliveAgent() {
  if (NODE_HTTP) {
    const agent = new http.Agent({ keepAlive: true })
    return { agent, destroy: () => agent.destroy() }
  }
  /** @type {Map<string, WirePool>} */
  const pools = new Map()
  return {
    pool: (url) => {
      let p = pools.get(url.origin)
      if (!p) pools.set(url.origin, (p = new WirePool(url)))
      return p
    },
    destroy: () => {
      for (const p of pools.values()) p.destroy()
    },
  }
}

/**
 * @typedef {object} HttpAnswer
 * @property {number} status
 * @property {string} contentType   '' when absent
 * @property {string | undefined} sessionId  the Mcp-Session-Id response header
 * @property {string} text          the whole body
 */

/**
 * @param {ReturnType<typeof keepAliveAgent>} client
 * @param {URL} url
 * @param {{ method?: string, headers: Record<string, string>, body?: string, timeoutMs: number }} opts
 * @returns {Promise<HttpAnswer>}
 */
export async function send(client, url, { method = 'POST', headers, body, timeoutMs }) {
  if (client.pool) {
    const res = await client
      .pool(url)
      .request({ method, path: `${url.pathname}${url.search}`, headers, body, timeoutMs })
    return {
      status: res.status,
      contentType: res.headers['content-type'] ?? '',
      sessionId: res.headers['mcp-session-id'],
      text: res.text,
    }
  }
  return nodeSend(/** @type {http.Agent} */ (client.agent), url, { method, headers, body, timeoutMs })
}

/**
 * The same over node:http's Agent.
 * @param {http.Agent} agent @param {URL} url
 * @param {{ method: string, headers: Record<string, string>, body?: string, timeoutMs: number }} opts
 * @returns {Promise<HttpAnswer>}
 */
function nodeSend(agent, url, { method, headers, body, timeoutMs }) {
  return new Promise((resolve, reject) => {
    let settled = false
    /** @param {Error} err */
    const fail = (err) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(err)
      req.destroy()
    }
    const req = http.request(url, { method, headers, agent })
    const timer = setTimeout(
      () => fail(new Error(`${method} ${url.pathname}: no complete answer in ${timeoutMs} ms`)),
      timeoutMs,
    )
    /** @param {Error} err */
    const failWith = (err) => fail(new Error(`${method} ${url.pathname}: ${err.message}`))
    req.on('error', failWith)
    req.once('response', (res) => {
      res.setEncoding('utf8')
      let text = ''
      res.on('data', (chunk) => {
        text += chunk
      })
      res.on('error', failWith)
      res.once('close', () =>
        fail(new Error(`${method} ${url.pathname}: connection closed before the answer was complete`)),
      )
      res.once('end', () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        const sid = res.headers['mcp-session-id']
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'] ?? '',
          sessionId: Array.isArray(sid) ? sid[0] : sid,
          text,
        })
      })
    })
    req.end(body)
  })
}

/**
 * GET `url` on its own connection and stream the body to `onText`. Resolves
 * once a 200 response has started; `onEnd` is called once when the stream
 * ends or fails afterwards (not after `close()`).
 * @param {URL} url
 * @param {{ headers: Record<string, string>, timeoutMs: number, onText: (chunk: string) => void, onEnd: (err?: Error)
 * => void }} opts
 * @returns {Promise<{ close: () => void }>}
 */
export function openStream(url, { headers, timeoutMs, onText, onEnd }) {
  return new Promise((resolve, reject) => {
    let started = false
    let closed = false
    /** @param {Error} [err] */
    const end = (err) => {
      if (started && !closed) {
        closed = true
        onEnd(err)
      }
    }
    const req = http.request(url, { method: 'GET', headers, agent: false })
    const timer = setTimeout(
      () => req.destroy(new Error(`GET ${url.pathname}: no response in ${timeoutMs} ms`)),
      timeoutMs,
    )
    req.on('error', (err) => {
      clearTimeout(timer)
      if (started) end(err)
      else reject(err)
    })
    req.once('response', (res) => {
      clearTimeout(timer)
      if (res.statusCode !== 200) {
        res.resume()
        req.destroy()
        reject(new Error(`GET ${url.pathname}: HTTP ${res.statusCode}`))
        return
      }
      started = true
      res.setEncoding('utf8')
      res.on('data', onText)
      res.on('error', (err) => end(new Error(`GET ${url.pathname} (stream): ${err.message}`)))
      res.once('close', () => end(new Error(`GET ${url.pathname}: stream closed by the server`)))
      resolve({
        close: () => {
          closed = true
          req.destroy()
        },
      })
    })
    req.end()
  })
}
