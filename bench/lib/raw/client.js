// The raw client's entry points: connect per the target's raw spec, find the
// echo tool, and the checked echo call the measurement loops run.
import { pickTool } from '../clients.js'
import { connectRawSse } from './http-sse.js'
import { echoFields, checkEcho } from './jsonrpc.js'
import { connectRawStreamable } from './streamable.js'

/**
 * How a target is reached without the SDK.
 * @typedef {object} RawSpec
 * @property {'streamable-http' | 'sse'} transport
 * @property {string} url
 * @property {Record<string, string>} [headers]
 */

/**
 * @param {RawSpec} spec
 * @param {string} era
 * @param {number} timeoutMs  per request
 */
export function connectRaw(spec, era, timeoutMs) {
  if (spec.transport === 'sse') return connectRawSse(spec.url, { headers: spec.headers, timeoutMs })
  return connectRawStreamable(spec.url, { era, headers: spec.headers, timeoutMs })
}

/**
 * `tools/list`, every page: the tools.
 * @param {import('./streamable.js').RawConnection} conn
 * @returns {Promise<{ name: string }[]>}
 */
export async function rawListTools(conn) {
  const tools = []
  let cursor
  for (let page = 0; page < 64; page++) {
    const result = await conn.request('tools/list', cursor === undefined ? '' : `"cursor":${JSON.stringify(cursor)}`)
    for (const t of result.tools ?? []) tools.push(t)
    cursor = result.nextCursor
    if (!cursor) break
  }
  return tools
}

/**
 * `tools/list` (every page) and the one tool matching `name`.
 * @param {import('./streamable.js').RawConnection} conn
 * @param {string | RegExp} name
 */
export async function rawFindTool(conn, name) {
  return pickTool(
    (await rawListTools(conn)).map((t) => t.name),
    name,
  )
}

/**
 * A checked `tools/call` of the echo tool.
 * @param {import('./streamable.js').RawConnection} conn
 * @param {string} tool
 */
export function rawEchoCall(conn, tool) {
  const toolJson = JSON.stringify(tool)
  let i = 0
  return async () => {
    const message = `bench ${i++}`
    checkEcho(await conn.request('tools/call', echoFields(toolJson, message), tool), message)
  }
}
