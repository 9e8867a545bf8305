import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client'
import type { UpstreamSpec } from './upstream-spec.js'

export type HttpUpstreamSpec = Extract<UpstreamSpec, { kind: 'http' }>

/**
 * The transport to a remote (Streamable HTTP) upstream: the manifest's
 * headers on every request, redirects only to the same origin (a redirect
 * elsewhere would carry those headers to another host).
 */
export function httpTransport(spec: HttpUpstreamSpec): Transport {
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, redirectPolicy: 'same-origin' })
}
