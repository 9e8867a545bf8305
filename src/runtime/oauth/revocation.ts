import { assertSecureTokenEndpoint, discoverOAuthServerInfo, selectClientAuthMethod, type OAuthClientInformationMixed } from '@modelcontextprotocol/client'
import type { OAuthGrant } from './grant-store.js'

/** A revocation endpoint that does not answer in this long does not hold up `disconnect` (the tokens are forgotten either way). */
export const REVOCATION_TIMEOUT_MS = 10_000

export type RevocationOutcome = { revoked: true; endpoint: string } | { revoked: false; reason: string }

/**
 * RFC 7009: the refresh token first (revoking it ends the grant), then the
 * access token, at the revocation endpoint the authorization server's
 * metadata names, with the client authentication it was registered with.
 * The SDK has discovery and method selection, not revocation itself.
 */
export async function revokeGrant(grant: OAuthGrant): Promise<RevocationOutcome> {
  if (!grant.tokens) return { revoked: false, reason: 'no tokens were held' }
  let endpoint: string | undefined
  let methods: string[] = []
  try {
    const info = await discoverOAuthServerInfo(grant.serverUrl)
    const metadata = info.authorizationServerMetadata as (Record<string, unknown> & { revocation_endpoint?: string }) | undefined
    endpoint = metadata?.revocation_endpoint
    methods = ((metadata?.revocation_endpoint_auth_methods_supported ?? metadata?.token_endpoint_auth_methods_supported) as string[] | undefined) ?? []
  } catch (err) {
    return { revoked: false, reason: `the authorization server could not be discovered: ${(err as Error).message}` }
  }
  if (!endpoint) return { revoked: false, reason: 'the authorization server offers no revocation endpoint' }
  const url = assertSecureTokenEndpoint(endpoint)
  // the client the tokens were issued to: a pre-registered one (with its secret) comes first, as in the sign-in
  const client = (grant.preRegistered ?? grant.client) as OAuthClientInformationMixed | undefined
  const tokens = [
    ...(typeof grant.tokens.refresh_token === 'string' ? [{ token: grant.tokens.refresh_token, hint: 'refresh_token' }] : []),
    { token: grant.tokens.access_token, hint: 'access_token' },
  ]
  for (const { token, hint } of tokens) {
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' })
    const body = new URLSearchParams({ token, token_type_hint: hint })
    if (client) authenticate(client, methods, headers, body)
    let res: Response
    try {
      res = await fetch(url, { method: 'POST', headers, body, redirect: 'error', signal: AbortSignal.timeout(REVOCATION_TIMEOUT_MS) })
    } catch (err) {
      return { revoked: false, reason: `the revocation endpoint ${url.href} could not be reached: ${(err as Error).message}` }
    }
    await res.text().catch(() => undefined)
    // 200 also for a token the server no longer knows (RFC 7009 §2.2)
    if (!res.ok) return { revoked: false, reason: `the revocation endpoint ${url.href} answered ${res.status}` }
  }
  return { revoked: true, endpoint: url.href }
}

function authenticate(client: OAuthClientInformationMixed, methods: string[], headers: Headers, body: URLSearchParams): void {
  const method = selectClientAuthMethod(client, methods)
  if (method === 'client_secret_basic' && client.client_secret) {
    const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`
    headers.set('authorization', `Basic ${Buffer.from(pair).toString('base64')}`)
    return
  }
  body.set('client_id', client.client_id)
  if (method === 'client_secret_post' && client.client_secret) body.set('client_secret', client.client_secret)
}
