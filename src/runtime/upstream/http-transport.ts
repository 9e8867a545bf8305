import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client'
import { upstreamGrantProvider } from '../oauth/upstream-grant.js'
import type { UpstreamSpec } from './upstream-spec.js'

export type HttpUpstreamSpec = Extract<UpstreamSpec, { kind: 'http' }>

/**
 * The transport to a remote (Streamable HTTP) upstream: the manifest's
 * headers on every request, redirects only to the same origin (a redirect
 * elsewhere would carry those headers to another host). An OAuth
 * connector's transport gets the SDK's OAuth handling over its stored grant:
 * the bearer token, a refresh before expiry and on a 401, step-up on a 403
 * `insufficient_scope` (one re-authorization per request, the SDK's default).
 */
export function httpTransport(spec: HttpUpstreamSpec): Transport {
  const authProvider = spec.oauth ? upstreamGrantProvider(spec.key, spec.url, spec.oauth) : undefined
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, redirectPolicy: 'same-origin', ...(authProvider ? { authProvider } : {}) })
}
