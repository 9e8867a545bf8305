import {
  discoverOAuthServerInfo,
  selectClientAuthMethod,
  type OAuthClientInformationMixed,
} from '@modelcontextprotocol/client'
import type { OAuthGrant } from './grant-store.js'
import { sameIssuer, unsafeOAuthUrl } from './oauth-endpoints.js'
import { oauthFetch } from './oauth-fetch.js'

export type RevocationOutcome = { revoked: true; endpoint: string } | { revoked: false; reason: string }

type FetchLike = ReturnType<typeof oauthFetch>
type ServerMetadata = Record<string, unknown> & { issuer?: string; revocation_endpoint?: string }

/**
 * RFC 7009: the refresh token first (revoking it ends the grant), then the
 * access token, at the revocation endpoint of the authorization server that
 * issued them, with the client authentication it was registered with. That
 * server is the one pinned at sign-in; the resource's metadata as it is now
 * is never asked, so a resource that starts naming another authorization
 * server cannot collect the tokens or the client secret (an OAuth mix-up).
 * The SDK has method selection, not revocation itself.
 */
export async function revokeGrant(
  grant: OAuthGrant,
  fetchFn: FetchLike = oauthFetch(grant.serverUrl),
): Promise<RevocationOutcome> {
  if (!grant.tokens) return { revoked: false, reason: 'no tokens were held' }
  const issuing = await issuingServer(grant, fetchFn)
  if ('reason' in issuing) return { revoked: false, reason: issuing.reason }
  const { metadata, issuer } = issuing
  const endpoint = metadata.revocation_endpoint
  if (!endpoint) return { revoked: false, reason: `the authorization server ${issuer} offers no revocation endpoint` }
  const unsafe = unsafeOAuthUrl(endpoint)
  if (unsafe) return { revoked: false, reason: `the revocation endpoint ${endpoint} is not used: ${unsafe}` }
  const url = new URL(endpoint)
  const methods =
    ((metadata.revocation_endpoint_auth_methods_supported ?? metadata.token_endpoint_auth_methods_supported) as
      | string[]
      | undefined) ?? []
  // the client the tokens were issued to: a pre-registered one (with its secret) comes first, as in the sign-in
  const client = (grant.preRegistered ?? grant.client) as OAuthClientInformationMixed | undefined
  const tokens = [
    ...(typeof grant.tokens.refresh_token === 'string'
      ? [{ token: grant.tokens.refresh_token, hint: 'refresh_token' }]
      : []),
    { token: grant.tokens.access_token, hint: 'access_token' },
  ]
  for (const { token, hint } of tokens) {
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' })
    const body = new URLSearchParams({ token, token_type_hint: hint })
    if (client) authenticate(client, methods, headers, body)
    let res: Response
    try {
      res = await fetchFn(url, { method: 'POST', headers, body })
    } catch (err) {
      // returned as the reason: revocation is best-effort, and the caller reports it
      return {
        revoked: false,
        reason: `the revocation endpoint ${url.href} could not be reached: ${(err as Error).message}`,
      }
    }
    // 200 also for a token the server no longer knows (RFC 7009 §2.2); nothing else says it was revoked
    if (res.status !== 200)
      return { revoked: false, reason: `the revocation endpoint ${url.href} answered ${res.status}` }
  }
  return { revoked: true, endpoint: url.href }
}

/**
 * The metadata of the server that issued the grant's tokens: the pinned one;
 * for a grant from before pinning, what discovery finds now, but only when
 * its issuer is the one the SDK stamped on the tokens at sign-in.
 */
async function issuingServer(
  grant: OAuthGrant,
  fetchFn: FetchLike,
): Promise<{ metadata: ServerMetadata; issuer: string } | { reason: string }> {
  if (grant.authorizationServer)
    return { metadata: grant.authorizationServer.metadata, issuer: grant.authorizationServer.issuer }
  const issued = grant.tokens?.issuer
  if (typeof issued !== 'string')
    return { reason: 'the grant does not record which authorization server issued its tokens' }
  let metadata: ServerMetadata | undefined
  try {
    metadata = (await discoverOAuthServerInfo(grant.serverUrl, { fetchFn })).authorizationServerMetadata as
      | ServerMetadata
      | undefined
  } catch (err) {
    // returned as the reason: revocation is best-effort, and the caller reports it
    return { reason: `the authorization server could not be discovered: ${(err as Error).message}` }
  }
  if (!metadata) return { reason: 'the authorization server could not be discovered: it serves no metadata' }
  if (!sameIssuer(metadata.issuer, issued)) {
    return {
      reason:
        `the server now names the authorization server ${metadata.issuer}, ` + `not ${issued}, which issued the tokens`,
    }
  }
  return { metadata, issuer: issued }
}

function authenticate(
  client: OAuthClientInformationMixed,
  methods: string[],
  headers: Headers,
  body: URLSearchParams,
): void {
  const method = selectClientAuthMethod(client, methods)
  if (method === 'client_secret_basic' && client.client_secret) {
    const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`
    headers.set('authorization', `Basic ${Buffer.from(pair).toString('base64')}`)
    return
  }
  body.set('client_id', client.client_id)
  if (method === 'client_secret_post' && client.client_secret) body.set('client_secret', client.client_secret)
}
