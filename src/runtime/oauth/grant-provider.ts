import {
  auth,
  isStrictScopeSuperset,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client'
import { randomBytes } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import { grantSecrets, type OAuthGrant, type OAuthGrantStore } from './grant-store.js'
import { CLIENT_NAME, type DaemonMode, type GrantTarget, type SignInMode } from './grant-target.js'
import { pinAuthorizationServer, pinnedDiscoveryState, sameIssuer } from './oauth-endpoints.js'
import { oauthFetch } from './oauth-fetch.js'
import type { PreRegisteredClient } from './pre-registered-client.js'
import { expiresSoon, missingScopes, oversizedToken } from './token-checks.js'

/**
 * The SDK's OAuthClientProvider over the grant store: the SDK runs
 * discovery, registration, PKCE, the token requests, `iss` and step-up;
 * this keeps what it learns in oauth-grants.json and decides what a
 * redirect means where no browser can be opened.
 */
export class GrantProvider implements OAuthClientProvider {
  private verifier?: string
  private discovery?: OAuthDiscoveryState
  private refreshing?: Promise<void>
  /** The SDK dropped the tokens because the authorization server refused them (invalid_grant, invalid_client). */
  private refused = false
  /** The SDK dropped the client because the authorization server refused it (invalid_client, unauthorized_client). */
  private clientRefused = false
  /** The issuer the SDK stamped on the pre-registered client: kept in memory, the stored client is the user's word. */
  private preRegisteredIssuer?: string
  /** Every request of the flow but the MCP endpoint's own: bounded in time and size (oauth-fetch.ts). */
  readonly fetch: ReturnType<typeof oauthFetch>

  constructor(
    private readonly store: OAuthGrantStore,
    private readonly target: GrantTarget,
    private readonly mode: SignInMode | DaemonMode,
  ) {
    this.fetch = oauthFetch(target.serverUrl)
    // without it the SDK's own choice stands: the resource metadata's resource, checked against the server URL
    const resource = target.resource
    if (resource !== undefined) this.validateResourceURL = async () => new URL(resource)
  }

  /** Set when the manifest names the resource (auth.resource): tokens are asked for that one. */
  validateResourceURL?: (serverUrl: string | URL, resource?: string) => Promise<URL | undefined>

  get redirectUrl(): string {
    // the daemon never completes a redirect, but the SDK needs one to know the flow is interactive
    return this.mode.kind === 'sign-in' ? this.mode.redirectUrl : 'http://127.0.0.1/oauth/callback'
  }

  get clientMetadataUrl(): string | undefined {
    return this.mode.kind === 'sign-in' ? this.mode.clientMetadataUrl : undefined
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.target.scopes?.length ? { scope: this.target.scopes.join(' ') } : {}),
    }
  }

  state(): string {
    return this.mode.kind === 'sign-in' ? this.mode.state : randomBytes(16).toString('base64url')
  }

  /**
   * The client, first come first: connect's flags, the pre-registered client stored with them, the manifest's clientId,
   * the stored registration (CIMD or dynamic).
   */
  async clientInformation(): Promise<StoredOAuthClientInformation | undefined> {
    const grant = await this.store.get(this.target.key)
    const pre = this.preRegistered(grant)
    // with a secret, the SDK authenticates at the token endpoint with client_secret_basic or _post, as the metadata
    // offers
    if (pre) return { ...pre, ...(this.preRegisteredIssuer ? { issuer: this.preRegisteredIssuer } : {}) }
    const stored = grant?.client as StoredOAuthClientInformation | undefined
    if (this.target.clientId)
      return stored?.client_id === this.target.clientId ? stored : { client_id: this.target.clientId }
    return stored
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    const pre = this.preRegistered(await this.store.get(this.target.key))
    if (pre && client.client_id === pre.client_id) {
      this.preRegisteredIssuer = (client as { issuer?: string }).issuer
      return
    }
    if (this.mode.kind === 'daemon') this.mode.learned?.(grantSecrets({ client: client as OAuthGrant['client'] }))
    await this.store.update(this.target.key, (g) => ({ ...(g ?? { serverUrl: this.target.serverUrl }), client }))
  }

  /**
   * With `ctx` the SDK's own read; without, the transport's read for a request, where an expiring token is refreshed
   * first.
   */
  async tokens(ctx?: { issuer: string }): Promise<StoredOAuthTokens | undefined> {
    if (this.mode.kind === 'sign-in') return undefined
    let grant = await this.store.get(this.target.key)
    if (!ctx && grant?.tokens && expiresSoon(grant.tokens.expires_in as number | undefined, grant.obtainedAt)) {
      await this.refreshOnce()
      grant = await this.store.get(this.target.key)
    }
    return grant?.tokens as StoredOAuthTokens | undefined
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    // known to the log's redactor before anything could print them
    if (this.mode.kind === 'daemon') this.mode.learned?.(grantSecrets({ tokens: tokens as OAuthGrant['tokens'] }))
    await this.refuseOversized(tokens)
    const { serverUrl } = this.target
    // a sign-in pins the authorization server it found; the daemon keeps the pin it refreshed against
    const pinned =
      this.mode.kind === 'sign-in' && this.discovery
        ? pinAuthorizationServer(this.target.key, this.discovery)
        : undefined
    await this.store.update(this.target.key, (g) => {
      // the pre-registered client (and its secret) is kept only once a sign-in with it succeeded
      const preRegistered = (this.mode.kind === 'sign-in' ? this.target.preRegistered : undefined) ?? g?.preRegistered
      const authorizationServer = this.mode.kind === 'sign-in' ? pinned : g?.authorizationServer
      return {
        serverUrl,
        ...(g?.client ? { client: g.client } : {}),
        ...(preRegistered ? { preRegistered } : {}),
        ...(authorizationServer ? { authorizationServer } : {}),
        tokens,
        obtainedAt: Date.now(),
      }
    })
    this.refused = false
    this.clientRefused = false
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.mode.kind === 'sign-in') return this.mode.authorizationUrl(url)
    const grant = await this.store.get(this.target.key)
    const scope = url.searchParams.get('scope') ?? undefined
    let needs: { reason: string; scope?: string }
    if (this.clientRefused && this.preRegistered(grant)?.client_secret)
      needs = {
        reason:
          "the authorization server refused the client's credentials (invalid_client): sign in with its current " +
          'secret (--client-secret-from-env)',
      }
    else if (this.refused)
      needs = { reason: 'the authorization server refused the stored grant (it expired or was revoked)' }
    else if (!grant?.tokens) needs = { reason: 'not signed in' }
    else if (scope && isStrictScopeSuperset(scope, grant.tokens.scope as string | undefined))
      needs = {
        reason: `the server asks for scope that was not granted: ${missingScopes(scope, grant.tokens.scope)}`,
        scope,
      }
    else if (!grant.tokens.refresh_token)
      needs = { reason: 'the access token expired and the authorization server issued no refresh token' }
    else
      throw new TuttiError(
        ErrorCodes.UPSTREAM_FAILED,
        `connector "${this.target.key}": the OAuth token could not be refreshed ` +
          `(the authorization server did not answer as expected); the next call tries again`,
      )
    return this.needsSignIn(needs.reason, needs.scope)
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier
  }

  codeVerifier(): string {
    if (!this.verifier)
      throw new TuttiError(ErrorCodes.INTERNAL, 'no PKCE code verifier: the sign-in was not started by this process')
    return this.verifier
  }

  /**
   * A sign-in's discovery: its endpoints are checked (oauth-endpoints.ts) before any authorization URL is built.
   * The daemon discovers only for a grant from before pinning: it adopts the server if it is the one that
   * issued the tokens, and otherwise stops using them.
   */
  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    if (this.mode.kind === 'sign-in') {
      if (!state.authorizationServerMetadata) {
        throw new TuttiError(
          ErrorCodes.OAUTH_SIGN_IN_FAILED,
          `connector "${this.target.key}": the server at mcp.url ${this.target.serverUrl} offers no OAuth metadata ` +
            `(no protected-resource metadata, RFC 9728, ` +
            `naming an authorization server with RFC 8414 or OpenID metadata), so there is nothing to sign in to`,
        )
      }
      pinAuthorizationServer(this.target.key, state)
      this.discovery = state
      return
    }
    const grant = await this.store.get(this.target.key)
    if (!grant?.tokens || grant.authorizationServer) return
    const found = state.authorizationServerMetadata?.issuer ?? state.authorizationServerUrl
    const issued = grant.tokens.issuer as string | undefined
    if (issued !== undefined && !sameIssuer(issued, found)) {
      await this.needsSignIn(
        `the server now names the authorization server ${found}, not ${issued}, which issued its tokens`,
      )
    }
    const authorizationServer = pinAuthorizationServer(this.target.key, state)
    if (authorizationServer) await this.store.update(this.target.key, (g) => (g ? { ...g, authorizationServer } : g))
  }

  /**
   * The daemon's: the authorization server pinned with the grant, so the SDK runs no discovery of its own.
   * Never what an earlier discovery left in memory: the pin on disk is what the user signed in to.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    if (this.mode.kind === 'sign-in') return this.discovery
    const pinned = (await this.store.get(this.target.key))?.authorizationServer
    return pinned ? pinnedDiscoveryState(pinned) : undefined
  }

  /** What this sign-in's discovery found (the resource metadata its wider second request goes to). */
  get discovered(): OAuthDiscoveryState | undefined {
    return this.discovery
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') this.verifier = undefined
    if (scope === 'discovery' || scope === 'all') this.discovery = undefined
    if (scope === 'verifier' || scope === 'discovery') return
    // a sign-in never used the stored tokens, so a refusal it meets is not theirs: the daemon keeps using them
    const dropTokens = scope !== 'client' && this.mode.kind === 'daemon'
    const dropClient = scope !== 'tokens'
    if (dropTokens) this.refused = true
    if (scope === 'client' && this.mode.kind === 'daemon') this.clientRefused = true
    if (!dropTokens && !dropClient) return
    await this.store.update(this.target.key, (g) => {
      if (!g) return g
      const next = { ...g }
      if (dropTokens) delete next.tokens
      if (dropClient) delete next.client
      return next
    })
  }

  /** An oversized token is never stored (token-checks.ts): a sign-in fails, the daemon's grant needs the user. */
  private async refuseOversized(tokens: StoredOAuthTokens): Promise<void> {
    const why = oversizedToken(tokens)
    if (!why) return
    if (this.mode.kind === 'sign-in') {
      throw new TuttiError(
        ErrorCodes.OAUTH_SIGN_IN_FAILED,
        `connector "${this.target.key}": ${why}; nothing was stored`,
      )
    }
    await this.needsSignIn(why)
  }

  /** The daemon's grant can only be restored by the user: marked, the reconciler told, the caller refused. */
  private async needsSignIn(reason: string, scope?: string): Promise<never> {
    const needs = { reason, ...(scope ? { scope } : {}) }
    await this.store.update(this.target.key, (g) =>
      g ? { ...g, needsAuth: needs } : { serverUrl: this.target.serverUrl, needsAuth: needs },
    )
    if (this.mode.kind === 'daemon') this.mode.needsAuth()
    throw new TuttiError(
      ErrorCodes.OAUTH_NEEDS_AUTH,
      `connector "${this.target.key}" needs a new sign-in: ${reason}; ` +
        `run \`tutti connector connect ${this.target.key}\``,
    )
  }

  /** connect's flags (a sign-in) beat what the last successful one stored. */
  private preRegistered(grant: OAuthGrant | undefined): PreRegisteredClient | undefined {
    return this.target.preRegistered ?? grant?.preRegistered
  }

  /**
   * One refresh at a time, through the SDK's auth(); a refusal the user must fix propagates, anything else leaves the
   * 401 path to retry.
   */
  private refreshOnce(): Promise<void> {
    this.refreshing ??= auth(this, { serverUrl: this.target.serverUrl, fetchFn: this.fetch })
      .then(
        () => undefined,
        (err: unknown) => {
          if (err instanceof TuttiError && err.code === ErrorCodes.OAUTH_NEEDS_AUTH) throw err
        },
      )
      .finally(() => {
        this.refreshing = undefined
      })
    return this.refreshing
  }
}
