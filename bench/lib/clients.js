// MCP SDK v2 clients pinned to one protocol era, over stdio, Streamable HTTP
// or the old HTTP+SSE transport.
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

export const MODERN = '2026-07-28'
export const LEGACY = '2025-06-18'

const INFO = { name: 'tutti-bench', version: '1.0.0' }

/**
 * @param {string} era  MODERN or LEGACY
 */
export function newClient(era) {
  if (era === MODERN) return new Client(INFO, { versionNegotiation: { mode: { pin: MODERN } } })
  if (era === LEGACY) return new Client(INFO, { supportedProtocolVersions: [LEGACY] })
  throw new Error(`unknown era ${era}`)
}

/**
 * @typedef {object} Connected
 * @property {import('@modelcontextprotocol/client').Client} client
 * @property {string} negotiated  protocol version the connection ended up with
 * @property {() => Promise<void>} close
 */

/**
 * @param {Client} client @param {import('@modelcontextprotocol/client').Transport} transport
 * @returns {Promise<Connected>}
 */
async function connected(client, transport) {
  await client.connect(transport)
  return {
    client,
    negotiated: client.getNegotiatedProtocolVersion() ?? client.getProtocolEra() ?? '?',
    close: () => client.close().catch(() => {}),
  }
}

/**
 * Spawn a stdio server (a child of this process) and connect to it.
 * @param {{ command: string, args: string[], env: Record<string, string>, cwd: string, era?: string }} opts
 * @returns {Promise<Connected>}
 */
export async function connectStdio({ command, args, env, cwd, era = LEGACY }) {
  const transport = new StdioClientTransport({ command, args, env, cwd, stderr: 'ignore' })
  return connected(newClient(era), transport)
}

/**
 * @param {string} url
 * @param {{ era: string, headers?: Record<string, string> }} opts
 * @returns {Promise<Connected>}
 */
export async function connectStreamableHttp(url, { era, headers = {} }) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  return connected(newClient(era), transport)
}

/**
 * The deprecated HTTP+SSE transport (GET stream + POST messages).
 * @param {string} url
 * @param {{ headers?: Record<string, string> }} [opts]
 * @returns {Promise<Connected>}
 */
export async function connectSse(url, { headers = {} } = {}) {
  const transport = new SSEClientTransport(new URL(url), { requestInit: { headers } })
  return connected(newClient(LEGACY), transport)
}

/**
 * Find the tool to call: exactly `name`, or (when `name` is a RegExp) the one
 * tool that matches it.
 * @param {import('@modelcontextprotocol/client').Client} client
 * @param {string | RegExp} name
 */
export async function findTool(client, name) {
  const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' })
  return pickTool(
    tools.map((t) => t.name),
    name,
  )
}

/**
 * The one name in `names` that is `name` (or matches it, for a RegExp).
 * @param {string[]} names
 * @param {string | RegExp} name
 */
export function pickTool(names, name) {
  const hits = typeof name === 'string' ? names.filter((n) => n === name) : names.filter((n) => name.test(n))
  if (hits.length !== 1) {
    const shown = names.slice(0, 20).join(', ')
    const more = names.length > 20 ? ', …' : ''
    throw new Error(
      `expected one tool matching ${String(name)}, found ${hits.length} among ${names.length} tools (${shown}${more})`,
    )
  }
  return hits[0]
}

/**
 * A `tools/call` of the echo tool that checks the answer.
 * @param {import('@modelcontextprotocol/client').Client} client
 * @param {string} toolName
 * @param {number} timeoutMs
 */
export function echoCall(client, toolName, timeoutMs) {
  let i = 0
  return async () => {
    const message = `bench ${i++}`
    const res = await client.callTool({ name: toolName, arguments: { message } }, { timeout: timeoutMs })
    const first = Array.isArray(res.content) ? res.content[0] : undefined
    const text = first && first.type === 'text' ? first.text : undefined
    if (res.isError || text !== `Echo: ${message}`)
      throw new Error(`unexpected echo result: ${JSON.stringify(res).slice(0, 300)}`)
  }
}
