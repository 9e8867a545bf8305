import { z } from 'zod'
import { ErrorCodes, TuttiError } from '../errors.js'
import { readJsonIfExists, writeJsonAtomic } from '../fs/atomic-write.js'
import { assertLockHeld, withLock } from '../fs/lock.js'
import type { StatePaths } from '../paths.js'

/**
 * oauth-grants.json: per connector, what an OAuth sign-in left behind (the
 * client registration or the pre-registered client and its secret, the
 * tokens and when they were obtained) and, once
 * the daemon found the grant unusable, why. One file beside
 * credentials.json, 0600, written atomically under the same state lock.
 * Its values never leave the process except as the Authorization header to
 * the connector's own server and the token requests to its authorization
 * server.
 */
const grantSchema = z.object({
  /** The MCP server URL signed in to: a release with another URL needs a new sign-in. */
  serverUrl: z.string(),
  client: z.looseObject({ client_id: z.string() }).optional(),
  /**
   * The pre-registered client `connect --client-id/--client-secret-from-env` named (its secret, if confidential): beats
   * the manifest's clientId until `disconnect`.
   */
  preRegistered: z.object({ client_id: z.string(), client_secret: z.string().optional() }).optional(),
  tokens: z.looseObject({ access_token: z.string(), token_type: z.string() }).optional(),
  /** ms since the epoch: `expires_in` counts from here. */
  obtainedAt: z.number().optional(),
  /**
   * The authorization server that issued the tokens, pinned at sign-in from its verified metadata: refresh and
   * revocation use these endpoints only (oauth-endpoints.ts). Grants from before pinning lack it and are pinned
   * on first use, when the issuer the SDK stamped on their tokens matches.
   */
  authorizationServer: z
    .object({
      issuer: z.string(),
      url: z.string(),
      metadata: z.looseObject({
        issuer: z.string(),
        token_endpoint: z.string(),
        revocation_endpoint: z.string().optional(),
      }),
      resourceMetadataUrl: z.string().optional(),
      resourceMetadata: z.looseObject({ resource: z.string() }).optional(),
    })
    .optional(),
  /** Set by the daemon when only the user can restore the grant (`connect`); the scope it needs, if wider. */
  needsAuth: z.object({ reason: z.string(), scope: z.string().optional() }).optional(),
})
export type OAuthGrant = z.infer<typeof grantSchema>

const grantsDoc = z.object({ schemaVersion: z.literal(1), connectors: z.record(z.string(), grantSchema) })
type GrantsDoc = z.infer<typeof grantsDoc>

export class OAuthGrantStore {
  constructor(private readonly paths: StatePaths) {}

  /** Every grant by key (a lock-free read: writes are atomic renames). */
  async all(): Promise<Record<string, OAuthGrant>> {
    return (await this.read()).connectors
  }

  async get(key: string): Promise<OAuthGrant | undefined> {
    return (await this.read()).connectors[key]
  }

  /** Read-modify-write of one connector's grant under the state lock; `fn` returning undefined forgets it. */
  async update(
    key: string,
    fn: (grant: OAuthGrant | undefined) => OAuthGrant | undefined,
  ): Promise<OAuthGrant | undefined> {
    return withLock(this.paths.stateLockTarget, (held) => this.updateHeld(held, key, fn))
  }

  /** `update` for a caller that already holds the state lock (`held`: its signal), such as an install. */
  async updateHeld(
    held: AbortSignal,
    key: string,
    fn: (grant: OAuthGrant | undefined) => OAuthGrant | undefined,
  ): Promise<OAuthGrant | undefined> {
    const doc = await this.read()
    const next = fn(doc.connectors[key])
    if (next === doc.connectors[key]) return next
    if (next) doc.connectors[key] = next
    else delete doc.connectors[key]
    assertLockHeld(held, this.paths.stateLockTarget)
    await writeJsonAtomic(this.paths.oauthGrantsJson, doc)
    return next
  }

  private async read(): Promise<GrantsDoc> {
    const file = this.paths.oauthGrantsJson
    let raw: unknown
    try {
      raw = await readJsonIfExists(file)
    } catch {
      // the parser quotes the text around the error, and this text holds tokens: say where, not what
      throw new TuttiError(
        ErrorCodes.STATE_CORRUPT,
        `${file} is not valid JSON; fix or remove it (the OAuth connectors then sign in again)`,
      )
    }
    if (raw === undefined) return { schemaVersion: 1, connectors: Object.create(null) as Record<string, OAuthGrant> }
    const parsed = grantsDoc.safeParse(raw)
    if (!parsed.success)
      throw new TuttiError(
        ErrorCodes.STATE_CORRUPT,
        `${file} does not match the expected format; fix or remove it (the OAuth connectors then sign in again)`,
      )
    const connectors = Object.create(null) as Record<string, OAuthGrant>
    for (const [key, grant] of Object.entries(parsed.data.connectors)) connectors[key] = grant
    return { schemaVersion: 1, connectors }
  }
}

/**
 * The names under which a grant (or a token response) holds a secret: redacted by value wherever they could be echoed.
 */
export const GRANT_SECRET_FIELDS = ['access_token', 'refresh_token', 'id_token', 'client_secret'] as const

/** Every secret value a grant holds: its tokens, its client's secret, the pre-registered client's secret. */
export function grantSecrets(
  grant: Partial<Pick<OAuthGrant, 'tokens' | 'client' | 'preRegistered'>> | undefined,
): string[] {
  const values: string[] = []
  for (const part of [grant?.tokens, grant?.client, grant?.preRegistered] as Array<
    Record<string, unknown> | undefined
  >) {
    for (const field of GRANT_SECRET_FIELDS) if (typeof part?.[field] === 'string') values.push(part[field] as string)
  }
  return values
}

/** Whether the daemon can use a grant for `serverUrl`: a token is held and nothing asked for the user since. */
export function grantReadiness(
  grant: OAuthGrant | undefined,
  serverUrl: string,
  key: string,
): { ready: true } | { ready: false; reason: string } {
  const connect = `tutti connector connect ${key}`
  if (!grant?.tokens)
    return {
      ready: false,
      reason: grant?.needsAuth ? `${grant.needsAuth.reason} (${connect})` : `not signed in (${connect})`,
    }
  if (grant.serverUrl !== serverUrl)
    return { ready: false, reason: `signed in to ${grant.serverUrl}, but the server is now ${serverUrl} (${connect})` }
  if (grant.needsAuth) return { ready: false, reason: `${grant.needsAuth.reason} (${connect})` }
  return { ready: true }
}
