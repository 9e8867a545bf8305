import { ProtocolError } from '@modelcontextprotocol/client'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { HTTPResponse } from 'h3'
import { toNodeHandler } from 'h3/node'
import type { DaemonContext } from '../../src/runtime/daemon/context.js'
import { createDaemonApp, withNodeFront, type NodeFront } from '../../src/runtime/daemon/listener/app.js'
import { listenLoopback } from '../../src/runtime/daemon/listener/listen.js'
import { createLogger, memorySink } from '../../src/runtime/log/logger.js'
import { ConnectorMcpEndpoint, MCP_PATH } from '../../src/runtime/mcpserver/mcp-endpoint.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import { ConnectorMCPRegistry } from '../../src/runtime/registry/connector-mcp-registry.js'
import type { RouteClient, ToolCallResult, UpstreamTool } from '../../src/runtime/registry/route.js'
import { SessionTokens } from '../../src/runtime/sessions/session-tokens.js'

/**
 * The connector endpoint in-process: a real registry, real session tokens
 * on a temp file, and an upstream that is an in-memory fake (the tools of
 * test/fixtures/fault-server.mjs, plus a few result shapes). Requests are
 * web Requests handed to `endpoint.handle`.
 *
 * The fake's results are shaped as the SDK client hands them over from a
 * real upstream: keys in the schema's order (`_meta`, `content`,
 * `structuredContent`, `isError`), unknown content keys already dropped.
 */
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
}
/** A legal extra `_meta` key: the same request, but not exactly plain, so the SDK serves it. */
export const SDK_META = { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' }

const obj = (properties: Record<string, unknown> = {}) => ({ type: 'object', properties })
export const TOOLS: UpstreamTool[] = [
  {
    name: 'echo',
    description: 'Echo the message back',
    inputSchema: obj({ message: { type: 'string' } }),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'slow',
    description: 'Answer after ms milliseconds, or when cancelled',
    inputSchema: obj({ ms: { type: 'integer' } }),
  },
  {
    name: 'regional',
    description: 'Echo a region carried in a header',
    inputSchema: obj({ region: { type: 'string', 'x-mcp-header': 'Region' } }),
  },
  { name: 'reject', description: 'Fail with a JSON-RPC error', inputSchema: obj({ code: { type: 'integer' } }) },
  { name: 'fail', description: 'A tool error', inputSchema: obj() },
  {
    name: 'structured',
    title: 'Structured',
    description: 'Structured content',
    inputSchema: obj(),
    outputSchema: obj({ n: { type: 'integer' } }),
  },
  { name: 'big', description: 'A large result', inputSchema: obj({ bytes: { type: 'integer' } }) },
  { name: 'deep', description: 'A result nested 10,000 levels', inputSchema: obj() },
  { name: 'meta', description: 'A result with _meta, stamped by a 2026 upstream', inputSchema: obj() },
  { name: 'bare', description: 'A result without content', inputSchema: obj() },
  { name: 'broken', description: 'A failure that is not JSON-RPC', inputSchema: obj() },
]

/**
 * Tools of a connector with a small cap (CAP_BYTES), for cut results (startEndpoint({ caps: true })): text, images
 * and an embedded resource; a typed tool; multi-byte text.
 */
export const CAP_BYTES = 4096
export const CAP_TOOLS: UpstreamTool[] = [
  { name: 'pictures', description: 'Text, two images, text', inputSchema: obj({ bytes: { type: 'integer' } }) },
  {
    name: 'typed',
    description: 'Structured content under an outputSchema',
    inputSchema: obj({ count: { type: 'integer' } }),
    outputSchema: obj({ items: { type: 'array', items: { type: 'string' } } }),
  },
  { name: 'accents', description: 'Multi-byte text', inputSchema: obj({ repeat: { type: 'integer' } }) },
]

/** Valid base64 of `bytes` bytes (the SDK checks it). */
const base64 = (bytes: number): string => Buffer.alloc(bytes, 7).toString('base64')

export class FakeUpstream implements RouteClient {
  readonly calls: Array<{ name: string; args: Record<string, unknown> | undefined }> = []
  cancelled = 0
  private started: Array<() => void> = []

  /** Resolves once a `slow` call is running (waits for the event, never for time). */
  slowStarted(): Promise<void> {
    return new Promise((resolve) => this.started.push(resolve))
  }

  async callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options: { signal?: AbortSignal },
  ): Promise<ToolCallResult> {
    this.calls.push({ name, args })
    const text = (t: unknown): ToolCallResult => ({ content: [{ type: 'text', text: String(t) }] })
    switch (name) {
      case 'echo':
        return text(args?.message)
      case 'slow':
        return this.slow(Number(args?.ms ?? 30_000), options.signal)
      case 'regional':
        return text(`region ${args?.region}`)
      case 'reject':
        throw new ProtocolError(Number(args?.code), `rejected with ${args?.code}`, { code: Number(args?.code) })
      case 'fail':
        return {
          content: [{ type: 'text', text: 'it failed' }],
          structuredContent: { reason: 'on purpose' },
          isError: true,
        }
      case 'structured':
        return { content: [{ type: 'text', text: '{"n":42}' }], structuredContent: { n: 42 } }
      case 'big':
        return text('x'.repeat(Number(args?.bytes ?? 1024 * 1024)))
      case 'deep': {
        let v: unknown = 'bottom'
        for (let i = 0; i < 10_000; i++) v = { v }
        return { content: [{ type: 'text', text: 'deep' }], structuredContent: v as Record<string, unknown> }
      }
      case 'meta':
        return {
          _meta: { trace: 'abc', 'io.modelcontextprotocol/serverInfo': { name: 'upstream', version: '9' } },
          content: [],
        }
      case 'bare':
        return { structuredContent: { a: 1 } } as unknown as ToolCallResult
      case 'pictures':
        return {
          content: [
            { type: 'text', text: 'two pictures follow' },
            { type: 'image', data: base64(Number(args?.bytes)), mimeType: 'image/png' },
            { type: 'image', data: base64(64), mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'file:///log.txt', mimeType: 'text/plain', text: 'l'.repeat(3000) } },
          ],
        }
      case 'typed': {
        const items = Array.from({ length: Number(args?.count) }, (_, i) => `item ${i} ✓`)
        return { content: [{ type: 'text', text: JSON.stringify({ items }) }], structuredContent: { items } }
      }
      case 'accents':
        return text('é中😀'.repeat(Number(args?.repeat)))
      case 'broken':
        throw new Error('the pipe broke')
      default:
        return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true }
    }
  }

  private slow(ms: number, signal: AbortSignal | undefined): Promise<ToolCallResult> {
    for (const resolve of this.started.splice(0)) resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ content: [{ type: 'text', text: `slept ${ms} ms` }] }), ms)
      signal?.addEventListener('abort', () => {
        clearTimeout(timer)
        this.cancelled++
        reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled'))
      })
    })
  }
}

export interface Harness {
  endpoint: ConnectorMcpEndpoint
  registry: ConnectorMCPRegistry
  sessions: SessionTokens
  upstream: FakeUpstream
  token: string
  logLines: string[]
  close(): Promise<void>
}

export async function startEndpoint(options: { caps?: boolean } = {}): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-endpoint-'))
  const logLines: string[] = []
  const log = createLogger(memorySink(logLines), undefined, 'mcp', 'debug')
  const sessions = new SessionTokens(path.join(dir, 'sessions.json'), log)
  await sessions.load()
  const token = await sessions.issue('ws', 'main', 'claude')
  const registry = new ConnectorMCPRegistry()
  const upstream = new FakeUpstream()
  registry.commit(buildRoute('fx', 1, upstream, TOOLS))
  if (options.caps) registry.commit({ ...buildRoute('cx', 1, upstream, CAP_TOOLS), maxResultBytes: CAP_BYTES })
  const endpoint = new ConnectorMcpEndpoint(registry, sessions, log)
  return {
    endpoint,
    registry,
    sessions,
    upstream,
    token,
    logLines,
    close: async () => {
      await endpoint.close()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

export const URL_ = `http://127.0.0.1:7777${MCP_PATH}`

/** A stored result's URI: 128 random bits, so two calls' answers differ there and only there. */
export const RESULT_URI = /tutti:\/\/results\/[A-Za-z0-9_-]{22}/g
export const withoutResultIds = (text: string): string => text.replace(RESULT_URI, 'tutti://results/<id>')

export interface Answer {
  status: number
  headers: Headers
  text: string
  json: any
  /** Served by the fast path's own encoder (an h3 HTTPResponse), not by the SDK. */
  fast: boolean
}

export async function read(res: Response | HTTPResponse): Promise<Answer> {
  const fast = res instanceof HTTPResponse
  const text = fast ? String(res.body ?? '') : await (res as Response).text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    const data = /^data: (.*)$/m.exec(text)
    if (data) json = JSON.parse(data[1]!)
  }
  return { status: res.status ?? 200, headers: res.headers, text, json, fast }
}

export function request(
  token: string | undefined,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array; signal?: AbortSignal } = {},
): Request {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...init.headers,
  }
  return new Request(URL_, { method: init.method ?? 'POST', headers, body: init.body, signal: init.signal })
}

export const modernHeaders = (method: string, params: Record<string, unknown> = {}): Record<string, string> => ({
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}),
})

/** A 2026-07-28 request with correct standard headers unless overridden. */
export async function modern(
  h: Harness,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  id: unknown = 1,
  signal?: AbortSignal,
): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: MODERN_META, ...params } })
  return read(
    await h.endpoint.handle(
      request(h.token, {
        headers: { ...modernHeaders(method, params), ...headers },
        body,
        ...(signal ? { signal } : {}),
      }),
    ),
  )
}

/** A 2025-era message; `version` false leaves out MCP-Protocol-Version (allowed in 2025, and the SDK path). */
export async function legacy(
  h: Harness,
  message: Record<string, unknown>,
  version: string | false = '2025-06-18',
  signal?: AbortSignal,
): Promise<Answer> {
  const headers: Record<string, string> = version ? { 'mcp-protocol-version': version } : {}
  return read(
    await h.endpoint.handle(
      request(h.token, {
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', ...message }),
        ...(signal ? { signal } : {}),
      }),
    ),
  )
}

/**
 * The endpoint behind a real node:http server on 127.0.0.1, as the daemon
 * serves it: the daemon app's listener with the node front (withNodeFront)
 * or, `front: false`, the h3 app alone. `served` counts what the node front
 * answered itself, what it handed over to h3 after reading, and what it
 * left to h3 untouched.
 */
export interface NodeServer {
  port: number
  served: { front: number; handedOver: number; declined: number }
  close(): Promise<void>
}

export async function listenOverNode(endpoint: ConnectorMcpEndpoint, options: { front: boolean }): Promise<NodeServer> {
  const served = { front: 0, handedOver: 0, declined: 0 }
  const log = createLogger(memorySink([]))
  const ctx = { log: { error: () => {}, redactor: { redactString: (s: string) => s } } } as unknown as DaemonContext
  const front: NodeFront = (req, res, headers, toH3) => {
    let handed = false
    const taken = endpoint.serveNode(req, res, headers, () => {
      handed = true
      served.handedOver++
      toH3()
    })
    if (!taken) served.declined++
    else res.once('finish', () => void (handed || served.front++))
    return taken
  }
  const app = createDaemonApp(ctx, 'control-token-for-tests', {
    mount: (a) => a.all(MCP_PATH, (event) => endpoint.handle(event.req)),
    ...(options.front ? { front } : {}),
  })
  const listener = await listenLoopback(withNodeFront(toNodeHandler(app), app), { log })
  return { port: Number(new URL(listener.url).port), served, close: () => listener.close() }
}

export interface WireAnswer {
  status: number
  /** Every response header as sent, in order, but Date (and the Keep-Alive timing that follows the socket). */
  rawHeaders: string[]
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

/** One POST on its own connection, headers exactly as given (Host included). */
export function wirePost(
  port: number,
  headers: Record<string, string | string[]>,
  body: string,
  path = MCP_PATH,
  method = 'POST',
): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    // a flat list, so that a header can be sent twice
    const flat: string[] = []
    for (const [name, value] of Object.entries(headers))
      for (const v of Array.isArray(value) ? value : [value]) flat.push(name, v)
    const req = http.request({ host: '127.0.0.1', port, path, method, headers: flat, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          const data = /^data: (.*)$/m.exec(text)
          if (data) json = JSON.parse(data[1]!)
        }
        const rawHeaders: string[] = []
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          if (res.rawHeaders[i]!.toLowerCase() !== 'date')
            rawHeaders.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`)
        resolve({ status: res.statusCode!, rawHeaders, headers: res.headers, text, json })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
