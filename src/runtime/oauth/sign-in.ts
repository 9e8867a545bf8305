import {
  auth,
  Client,
  computeScopeUnion,
  isStrictScopeSuperset,
  IssuerMismatchError,
  OAuthError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client'
import { randomBytes } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import { UPSTREAM_CLIENT_INFO } from '../names.js'
import type { StatePaths } from '../paths.js'
import { browserCommand, openBrowser } from './browser-opener.js'
import { GrantProvider } from './grant-provider.js'
import type { GrantTarget } from './grant-target.js'
import { OAuthGrantStore } from './grant-store.js'
import { LoopbackRedirect, REDIRECT_PATH } from './loopback-redirect.js'
import { assertOAuthUrl } from './oauth-endpoints.js'
import { oauthFetch, OAuthHttpError } from './oauth-fetch.js'

export { SIGN_IN_WAIT_MS } from './sign-in-timeout.js'

/**
 * A Client ID Metadata Document URL for tutti (CIMD), where one is published; without it, dynamic registration follows
 * a pre-registered id.
 */
export const CLIENT_METADATA_URL_VAR = 'TUTTI_OAUTH_CLIENT_METADATA_URL'

export interface SignInRequest {
  /** `--browser`: the command that opens the authorization URL. */
  browser?: string
  env: NodeJS.ProcessEnv
  timeoutMs: number
  /** Human lines (stderr, also with --json): the authorization URL, the browser's failure. */
  print: (line: string) => void
  /** The daemon: the URL goes to an agent's user (URL-mode elicitation) instead of a browser; throws to give up. */
  open?: (url: string) => Promise<void>
}

/**
 * `tutti connector connect <key>` for an OAuth connector: the server's 401
 * starts the SDK's authorization (discovery, registration, PKCE,
 * `resource`, scope selection), the user signs in in a browser, the
 * loopback redirect brings the code back, and the SDK checks `iss` and
 * redeems it. tutti's parts: the redirect listener, the browser, the
 * `state` check, and the grant store. Nothing is stored until the tokens are.
 */
export class OAuthSignIn {
  constructor(
    private readonly paths: StatePaths,
    private readonly target: GrantTarget & { headers: Record<string, string> },
  ) {}

  async run(request: SignInRequest): Promise<void> {
    const store = new OAuthGrantStore(this.paths)
    const previous = await store.get(this.target.key)
    const state = randomBytes(16).toString('base64url')
    const redirect = await LoopbackRedirect.listen(state, registeredPort(previous?.client?.redirect_uris))
    let authorizationUrl: URL | undefined
    const provider = new GrantProvider(store, this.target, {
      kind: 'sign-in',
      redirectUrl: redirect.url,
      state,
      ...(request.env[CLIENT_METADATA_URL_VAR] ? { clientMetadataUrl: request.env[CLIENT_METADATA_URL_VAR] } : {}),
      authorizationUrl: (url) => {
        authorizationUrl = url
      },
    })
    const serverUrl = new URL(this.target.serverUrl)
    // the manifest's headers go to the MCP server only, never to its authorization server
    const fetch = oauthFetch(serverUrl, this.target.headers)
    const transport = new StreamableHTTPClientTransport(serverUrl, {
      authProvider: provider,
      fetch,
      redirectPolicy: 'same-origin',
    })
    try {
      try {
        // no token is sent: the server's 401 (with its WWW-Authenticate challenge) starts the authorization
        const client = new Client({ ...UPSTREAM_CLIENT_INFO }, { versionNegotiation: { mode: 'auto' } })
        await client.connect(transport)
        await client.close()
      } catch (err) {
        if (!authorizationUrl) throw this.failure(err)
      }
      if (!authorizationUrl)
        throw this.refused(
          'the server at mcp.url answered without asking for authorization, ' +
            'so it needs no OAuth sign-in (auth.kind "oauth")',
        )
      // a step-up the daemon could not complete needs more scope than this challenge names: ask for both
      const asked = authorizationUrl.searchParams.get('scope') ?? undefined
      const wanted = computeScopeUnion(asked, previous?.needsAuth?.scope)
      if (isStrictScopeSuperset(wanted, asked)) {
        authorizationUrl = undefined
        // what this sign-in's discovery found: the wider second request goes to the same resource metadata
        const metadataUrl = provider.discovered?.resourceMetadataUrl
        const wider = { serverUrl, scope: wanted!, forceReauthorization: true, fetchFn: provider.fetch }
        await auth(provider, { ...wider, ...(metadataUrl ? { resourceMetadataUrl: new URL(metadataUrl) } : {}) }).catch(
          (err: unknown) => {
            throw this.failure(err)
          },
        )
        if (!authorizationUrl)
          throw this.refused('the authorization server did not start an authorization for the wider scope')
      }
      // handed to the OS opener: a file:, smb: or vscode: URL would run whatever is registered for it
      const url = assertOAuthUrl(this.target.key, 'the authorization URL', (authorizationUrl as URL).href).href
      request.print(`Open this URL to sign in to ${this.target.key}:\n  ${url}`)
      if (request.open) await request.open(url)
      else {
        const command = await browserCommand(request.browser, request.env)
        if (command) openBrowser(command, url, request.env, request.print)
      }
      const response = await redirect.wait(request.timeoutMs)
      if (!response) {
        const ignored = redirect.ignored ? ` (ignored ${redirect.ignored} with another state: forged or stale)` : ''
        const seconds = Math.round(request.timeoutMs / 1000)
        throw this.refused(
          `no authorization response reached ${redirect.url} within ${seconds} s${ignored} (--sign-in-timeout); ` +
            `open ${url} in a browser on this machine to sign in`,
        )
      }
      await transport.finishAuth(response).catch((err: unknown) => {
        throw this.failure(err)
      })
    } finally {
      // the sign-in's own outcome is what counts; a transport that fails to close adds nothing
      await transport.close().catch(() => undefined)
      await redirect.close()
    }
  }

  private refused(why: string): TuttiError {
    return new TuttiError(ErrorCodes.OAUTH_SIGN_IN_FAILED, `connector "${this.target.key}": ${why}`)
  }

  /**
   * What the SDK threw, as a person reads it: which check refused, and what the authorization server said (never a
   * token).
   */
  private failure(err: unknown): TuttiError {
    if (err instanceof TuttiError) return err
    if (err instanceof IssuerMismatchError)
      return this.refused(`the issuer check failed (RFC 9207 / RFC 8414): ${err.message}; nothing was stored`)
    if (err instanceof OAuthHttpError)
      return this.refused(`the authorization server's answer was refused: ${err.message}; nothing was stored`)
    if (err instanceof OAuthError)
      return this.refused(`the authorization server refused (${err.code}): ${err.message}; nothing was stored`)
    const message = (err as Error).message ?? String(err)
    if (err instanceof TypeError) {
      const cause = (err.cause as Error | undefined)?.message ?? message
      return new TuttiError(
        ErrorCodes.UPSTREAM_FAILED,
        `connector "${this.target.key}": could not reach ${this.target.serverUrl} ` +
          `or its authorization server: ${cause}`,
      )
    }
    return this.refused(`the sign-in failed: ${message}`)
  }
}

/** The loopback port of the redirect URI the stored client was registered with, if any. */
function registeredPort(uris: unknown): number | undefined {
  const first = Array.isArray(uris) ? uris.find((u): u is string => typeof u === 'string') : undefined
  if (!first) return undefined
  try {
    const url = new URL(first)
    return url.hostname === '127.0.0.1' && url.pathname === REDIRECT_PATH && url.port ? Number(url.port) : undefined
  } catch {
    // a registered redirect that is not a URL names no port to reuse
    return undefined
  }
}
