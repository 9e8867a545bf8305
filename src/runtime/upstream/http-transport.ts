import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client'
import { oauthFetch } from '../oauth/oauth-fetch.js'
import { upstreamGrantProvider } from '../oauth/upstream-grant.js'
import type { UpstreamSpec } from './upstream-spec.js'

export type HttpUpstreamSpec = Extract<UpstreamSpec, { kind: 'http' }>

/**
 * The transport to a remote (Streamable HTTP) upstream: the manifest's
 * headers on every request to the MCP endpoint, redirects only to the same
 * origin (a redirect elsewhere would carry those headers to another host),
 * and never those headers to an authorization server. An OAuth
 * connector's transport gets the SDK's OAuth handling over its stored grant:
 * the bearer token, a refresh before expiry and on a 401, step-up on a 403
 * `insufficient_scope` (one re-authorization per request, the SDK's default).
 */
export function httpTransport(spec: HttpUpstreamSpec): Transport {
  const url = new URL(spec.url)
  if (!spec.oauth)
    return new StreamableHTTPClientTransport(url, {
      requestInit: { headers: spec.headers },
      redirectPolicy: 'same-origin',
    })
  const authProvider = upstreamGrantProvider(spec.key, spec.url, spec.oauth)
  // the manifest's headers reach the MCP endpoint only; the OAuth requests are bounded (oauth/oauth-fetch.ts)
  return new StreamableHTTPClientTransport(url, {
    authProvider,
    fetch: oauthFetch(url, spec.headers),
    redirectPolicy: 'same-origin',
  })
}
