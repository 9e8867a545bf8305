import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import http from 'node:http'

export interface Binding {
  url: string
  headers: Record<string, string>
}

export async function modernClient(binding: Binding): Promise<Client> {
  const client = new Client(
    { name: 'tutti-test-modern', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  await client.connect(
    new StreamableHTTPClientTransport(new URL(binding.url), { requestInit: { headers: binding.headers } }),
  )
  return client
}

export async function legacyClient(binding: Binding): Promise<Client> {
  const client = new Client({ name: 'tutti-test-legacy', version: '1' }, { supportedProtocolVersions: ['2025-06-18'] })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(binding.url), { requestInit: { headers: binding.headers } }),
  )
  return client
}

export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  json?: any
}

/** A raw HTTP request (node:http, so Host and Origin can be anything). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: options.method ?? 'POST', headers: options.headers },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            const data = /^data: (.*)$/m.exec(text)
            if (data) json = JSON.parse(data[1]!)
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

/** A modern (2026-07-28) JSON-RPC POST with correct standard headers unless overridden. */
export function modernPost(
  binding: Binding,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const std: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  }
  if (method === 'tools/call') std['mcp-name'] = String(params.name)
  return rawRequest(binding.url, {
    headers: { ...binding.headers, ...std, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: MODERN_META, ...params } }),
  })
}

/** A 2025-era JSON-RPC POST. */
export function legacyPost(binding: Binding, message: Record<string, unknown>, headers: Record<string, string> = {}) {
  return rawRequest(binding.url, {
    headers: {
      ...binding.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  })
}
