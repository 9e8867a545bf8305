// The raw client over the old HTTP+SSE transport (mcp-hub): GET the stream,
// take the POST URL from its `endpoint` event, POST every message there (the
// POST answers 202) and read the answers from the stream, matched by id.
import { LEGACY } from '../clients.js'
import { withTimeout } from '../wait.js'
import { keepAliveAgent, openStream, send } from './http.js'
import { initializeFields, notificationBody, requestBody, resultOf, snippet } from './jsonrpc.js'
import { sseParser } from './sse.js'

/**
 * @param {string} url  the GET (stream) URL
 * @param {{ headers?: Record<string, string>, timeoutMs: number }} opts
 * @returns {Promise<import('./streamable.js').RawConnection>}
 */
export async function connectRawSse(url, { headers = {}, timeoutMs }) {
  const streamUrl = new URL(url)
  const agent = keepAliveAgent()
  /** @type {Map<number, { resolve: (msg: any) => void, reject: (err: Error) => void, timer: NodeJS.Timeout }>} */
  const pending = new Map()
  /** @type {Error | undefined} */
  let broken
  let onEndpoint = (/** @type {URL} */ _u) => {}
  let noEndpoint = (/** @type {Error} */ _e) => {}
  /** @type {Promise<URL>} */
  const endpoint = new Promise((resolve, reject) => {
    onEndpoint = resolve
    noEndpoint = reject
  })
  endpoint.catch(() => {})
  const feed = sseParser((e) => {
    if (e.event === 'endpoint') return onEndpoint(new URL(e.data, streamUrl))
    if (e.event !== 'message') return
    const msg = JSON.parse(e.data)
    const waiter = typeof msg.id === 'number' && msg.method === undefined ? pending.get(msg.id) : undefined
    if (!waiter) return // notifications and anything unasked for
    pending.delete(msg.id)
    clearTimeout(waiter.timer)
    waiter.resolve(msg)
  })
  /** @param {Error} err */
  const fail = (err) => {
    broken = err
    noEndpoint(err)
    for (const w of pending.values()) {
      clearTimeout(w.timer)
      w.reject(err)
    }
    pending.clear()
  }
  const stream = await openStream(streamUrl, {
    headers: { Accept: 'text/event-stream', ...headers },
    timeoutMs,
    onText: feed,
    onEnd: (err) => fail(err ?? new Error('SSE stream ended')),
  })

  /** @type {URL} */
  let postUrl
  const postHeaders = { 'Content-Type': 'application/json', ...headers }
  /** @param {string} body */
  const post = async (body) => {
    const res = await send(agent, postUrl, { headers: postHeaders, body, timeoutMs })
    if (res.status < 200 || res.status > 299)
      throw new Error(`POST ${postUrl.pathname}: HTTP ${res.status}: ${snippet(res.text)}`)
  }
  let nextId = 1
  /** @param {string} method @param {string} fields */
  const request = async (method, fields) => {
    if (broken) throw broken
    const id = nextId++
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`${method}: no answer on the SSE stream in ${timeoutMs} ms`))
      }, timeoutMs)
      pending.set(id, { resolve, reject, timer })
    })
    try {
      const [msg] = await Promise.all([answer, post(requestBody(id, method, fields, false))])
      return resultOf(msg, id)
    } finally {
      const w = pending.get(id)
      if (w) {
        clearTimeout(w.timer)
        pending.delete(id)
      }
    }
  }

  try {
    postUrl = await withTimeout('SSE endpoint event', timeoutMs, () => endpoint)
    const init = await request('initialize', initializeFields(LEGACY))
    await post(notificationBody('notifications/initialized'))
    return {
      negotiated: String(init.protocolVersion),
      request,
      close: async () => {
        stream.close()
        fail(new Error('connection closed'))
        agent.destroy()
      },
    }
  } catch (err) {
    stream.close()
    agent.destroy()
    throw err
  }
}
