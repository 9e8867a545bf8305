import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/client'
import { UPSTREAM_CLIENT_INFO } from '../names.js'
import { OAUTH_REQUEST_TIMEOUT_MS, oauthFetch } from './oauth-fetch.js'
import { HEADER, LEGACY_REVISION } from '../mcp-wire.js'

/** What a remote MCP server asks of a client that sends no token. */
export type SignInProbe =
  /** It answered: no sign-in is needed. */
  | { kind: 'open' }
  /** 401 and OAuth: a challenge naming its resource metadata (RFC 9728), or metadata at the well-known URL. */
  | { kind: 'oauth' }
  /** 401 and no OAuth metadata anywhere: it wants credentials the user gives (a header). */
  | { kind: 'credentials' }

/** The era whose initialize every Streamable HTTP server of today answers (or refuses with 401 first). */
const PROBE_REVISION = LEGACY_REVISION

/**
 * Ask the server at `serverUrl` what it wants, the way a sign-in starts:
 * an initialize with the manifest's headers and no token. A 401 is OAuth
 * when its `WWW-Authenticate` names resource metadata, or when the
 * protected-resource metadata can be discovered (`/.well-known/oauth-
 * protected-resource[/path]`, fetched without those headers, bounded).
 * Plugins from Linear, Notion, Figma or Cloudflare say `auth: none` and
 * are OAuth servers all the same: this is how tutti finds out.
 */
export async function probeSignIn(serverUrl: string, headers: Record<string, string>): Promise<SignInProbe> {
  const fetchFn = oauthFetch(serverUrl, headers)
  const params = { protocolVersion: PROBE_REVISION, capabilities: {}, clientInfo: UPSTREAM_CLIENT_INFO }
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params }
  const res = await fetchFn(serverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(init),
    // a redirect would carry the manifest's headers on: the transport refuses it too
    redirect: 'manual',
    signal: AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS),
  })
  // only the status and headers count: a failed cancel of the body changes nothing
  await res.body?.cancel().catch(() => undefined)
  if (res.status !== 401) {
    await endSession(fetchFn, serverUrl, res.headers.get(HEADER.sessionId))
    return { kind: 'open' }
  }
  if (extractWWWAuthenticateParams(res).resourceMetadataUrl) return { kind: 'oauth' }
  try {
    const metadata = await discoverOAuthProtectedResourceMetadata(serverUrl, undefined, fetchFn)
    return metadata.authorization_servers?.length ? { kind: 'oauth' } : { kind: 'credentials' }
  } catch {
    // no protected-resource metadata: the server wants credentials, not an OAuth sign-in
    return { kind: 'credentials' }
  }
}

/** An open server may have started a session for the probe's initialize: it is ended (best effort). */
type Fetch = ReturnType<typeof oauthFetch>
async function endSession(fetchFn: Fetch, serverUrl: string, session: string | null): Promise<void> {
  if (!session) return
  const signal = AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS)
  const headers = { [HEADER.sessionId]: session, [HEADER.protocolVersion]: PROBE_REVISION }
  await fetchFn(serverUrl, { method: 'DELETE', headers, redirect: 'manual', signal }).then(
    (r) => r.body?.cancel(),
    () => undefined,
  )
}
