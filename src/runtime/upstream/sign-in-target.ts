import type { RouteSignInTarget } from '../registry/route.js'
import type { UpstreamSpec } from './upstream-spec.js'

/** An OAuth upstream's sign-in target (a caller may sign in again from inside its agent); undefined otherwise. */
export function signInTargetOf(spec: UpstreamSpec): RouteSignInTarget | undefined {
  if (spec.kind !== 'http' || !spec.oauth) return undefined
  const { oauth } = spec
  return {
    key: spec.key,
    serverUrl: spec.url,
    headers: spec.headers,
    stateRoot: oauth.stateRoot,
    ...(oauth.clientId ? { clientId: oauth.clientId } : {}),
    ...(oauth.scopes ? { scopes: oauth.scopes } : {}),
    ...(oauth.resource ? { resource: oauth.resource } : {}),
  }
}
