import { statePaths } from '../paths.js'
import { GrantProvider } from './grant-provider.js'
import { OAuthGrantStore } from './grant-store.js'

/**
 * What a remote upstream's spec carries when its connector signs in with
 * OAuth: where the grant is kept and what the manifest asks. `needsAuth`
 * tells the daemon the grant needs the user (it reconciles the connector);
 * being a function it is left out of the spec's hash.
 */
export interface UpstreamOAuth {
  stateRoot: string
  clientId?: string
  scopes?: string[]
  /** Manifest `auth.resource`: the resource indicator (RFC 8707) tokens are asked for. */
  resource?: string
  needsAuth: () => void
  /** Secrets the provider obtains (refreshed tokens, a registration's secret): the daemon's log redacts them. */
  learned: (secrets: string[]) => void
}

/** The daemon's auth provider for one connection to the upstream at `url`. */
export function upstreamGrantProvider(key: string, url: string, oauth: UpstreamOAuth): GrantProvider {
  const target = {
    key,
    serverUrl: url,
    ...(oauth.clientId ? { clientId: oauth.clientId } : {}),
    ...(oauth.scopes ? { scopes: oauth.scopes } : {}),
    ...(oauth.resource ? { resource: oauth.resource } : {}),
  }
  return new GrantProvider(new OAuthGrantStore(statePaths(oauth.stateRoot)), target, {
    kind: 'daemon',
    needsAuth: oauth.needsAuth,
    learned: oauth.learned,
  })
}
