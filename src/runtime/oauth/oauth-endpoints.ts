import type { OAuthDiscoveryState } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'

/**
 * Which URLs an OAuth flow may use: `https:`, or `http:` on this machine's
 * loopback (a local authorization server in development). Everything else
 * is refused before it is opened or sent to: a `file:`, `smb:` or
 * `vscode:` authorization URL handed to the OS opener runs whatever is
 * registered for it, and a token sent over plain HTTP to another host can be
 * read on the way.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}

/** Why `value` may not be used by an OAuth flow, or undefined when it may. */
export function unsafeOAuthUrl(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    // the reason is the answer, as the doc comment says
    return 'it is not a URL'
  }
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:')
    return isLoopbackHost(url.hostname) ? undefined : 'it is plain http: and not on a loopback address'
  return `its scheme ${url.protocol} is neither https: nor http: on a loopback address`
}

/** `what` (a metadata field, "the authorization URL") with its value, refused unless it is safe to use. */
export function assertOAuthUrl(key: string, what: string, value: string): URL {
  const why = unsafeOAuthUrl(value)
  if (why) {
    throw new TuttiError(
      ErrorCodes.OAUTH_SIGN_IN_FAILED,
      `connector "${key}": ${what} ${value} is refused: ${why}; nothing was opened or sent, nothing was stored`,
    )
  }
  return new URL(value)
}

/** The authorization server's endpoints a sign-in may use or pin, by their RFC 8414 field names. */
const ENDPOINT_FIELDS = [
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'revocation_endpoint',
] as const

/**
 * The authorization server a sign-in found, as it is pinned with the grant:
 * refresh and revocation go to these endpoints and no others, whatever the
 * resource's metadata names later (an OAuth mix-up, RFC 9700 §4.4).
 */
export interface PinnedAuthorizationServer {
  issuer: string
  url: string
  metadata: Record<string, unknown> & { issuer: string; token_endpoint: string; revocation_endpoint?: string }
  resourceMetadataUrl?: string
  resourceMetadata?: Record<string, unknown> & { resource: string }
}

/**
 * Check a discovery's endpoints and make the record that pins them.
 * Throws (naming the field) when one of them is unsafe, so a sign-in stops
 * before its authorization URL is built; undefined when the discovery found
 * no authorization server metadata.
 */
export function pinAuthorizationServer(key: string, state: OAuthDiscoveryState): PinnedAuthorizationServer | undefined {
  const metadata = state.authorizationServerMetadata as PinnedAuthorizationServer['metadata'] | undefined
  if (!metadata) return undefined
  for (const field of ENDPOINT_FIELDS) {
    const value = metadata[field]
    if (typeof value === 'string') assertOAuthUrl(key, `the authorization server's ${field}`, value)
  }
  return {
    issuer: metadata.issuer,
    url: String(state.authorizationServerUrl),
    metadata,
    ...(state.resourceMetadataUrl ? { resourceMetadataUrl: state.resourceMetadataUrl } : {}),
    ...(state.resourceMetadata
      ? { resourceMetadata: state.resourceMetadata as PinnedAuthorizationServer['resourceMetadata'] }
      : {}),
  }
}

/** The pinned record as the SDK's discovery state: auth() then runs no discovery and uses only these endpoints. */
export function pinnedDiscoveryState(pinned: PinnedAuthorizationServer): OAuthDiscoveryState {
  return {
    authorizationServerUrl: pinned.url,
    authorizationServerMetadata: pinned.metadata as OAuthDiscoveryState['authorizationServerMetadata'],
    ...(pinned.resourceMetadataUrl ? { resourceMetadataUrl: pinned.resourceMetadataUrl } : {}),
    ...(pinned.resourceMetadata
      ? { resourceMetadata: pinned.resourceMetadata as OAuthDiscoveryState['resourceMetadata'] }
      : {}),
  }
}

/** The issuer as RFC 8414 compares it: the URL, without a trailing slash on a bare origin. */
export function sameIssuer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false
  const norm = (s: string) => s.replace(/\/$/, '')
  return norm(a) === norm(b)
}
