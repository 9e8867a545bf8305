import type { PreRegisteredClient } from './pre-registered-client.js'

// Whose grant a GrantProvider keeps, and the two ways it runs: a user's sign-in (`connect`) or the daemon.

/** The client tutti registers as (RFC 7591) and describes in a metadata document. */
export const CLIENT_NAME = 'tutti'

export interface GrantTarget {
  key: string
  /** The MCP server (the protected resource). */
  serverUrl: string
  /** Manifest `auth.clientId`: a pre-registered client comes first. */
  clientId?: string
  /** Manifest `auth.scopes`: asked for when neither the challenge nor the resource metadata names any. */
  scopes?: string[]
  /** Manifest `auth.resource` (Codex's `oauth_resource`): the RFC 8707 resource tokens are for, not the server URL. */
  resource?: string
  /**
   * A sign-in: the client `--client-id`/`--client-secret-from-env` named; stored with the tokens, it beats `clientId`
   * from then on.
   */
  preRegistered?: PreRegisteredClient
}

/**
 * `connect`: the user's sign-in. No stored token is sent or refreshed (the
 * server's 401 starts a fresh authorization), and the authorization URL is
 * handed to the flow rather than opened here.
 */
export interface SignInMode {
  kind: 'sign-in'
  redirectUrl: string
  state: string
  /** A Client ID Metadata Document URL (CIMD), used when the authorization server supports them. */
  clientMetadataUrl?: string
  authorizationUrl(url: URL): void
}

/** The daemon: tokens are sent and refreshed; what only the user can fix marks the grant and tells the reconciler. */
export interface DaemonMode {
  kind: 'daemon'
  needsAuth(): void
  /** Secret values the daemon just obtained (a refreshed token, a registered client's secret): its log redacts them. */
  learned?(secrets: string[]): void
}
