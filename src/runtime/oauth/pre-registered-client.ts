import { ErrorCodes, TuttiError } from '../errors.js'
import type { ConnectorManifest } from '../manifest/schema.js'

/**
 * A client registered with the authorization server out of band, and its
 * secret when it is a confidential one. The secret never comes from the
 * manifest (a release is shared; a secret is the user's): `connect` reads it
 * from the environment (`--client-secret-from-env NAME`), and it is kept in
 * oauth-grants.json (0600) once a sign-in with it succeeded.
 */
export interface PreRegisteredClient {
  client_id: string
  client_secret?: string
}

/** What `connect`'s flags said: `--client-id`, and the value of `--client-secret-from-env`'s variable. */
export interface ClientFlags {
  clientId?: string
  clientSecret?: string
}

/** The manifest's limit on `auth.clientId`, kept for `--client-id`. */
const MAX_CLIENT_ID = 1024

/**
 * The client the flags name for this connector: `--client-id` beats the
 * manifest's `auth.clientId`; a secret needs one of them. Undefined when
 * neither flag was given (the manifest and the stored grant decide). Bad
 * input is refused before anything is stored.
 */
export function preRegisteredClient(
  key: string,
  auth: ConnectorManifest['auth'],
  flags: ClientFlags | undefined,
): PreRegisteredClient | undefined {
  if (flags?.clientId === undefined && flags?.clientSecret === undefined) return undefined
  const given = flags.clientId !== undefined ? '--client-id' : '--client-secret-from-env'
  if (auth.kind !== 'oauth')
    throw invalid(`${given}: connector "${key}" does not sign in with OAuth (its auth.kind is "${auth.kind}")`)
  if (flags.clientId !== undefined && (!flags.clientId || flags.clientId.length > MAX_CLIENT_ID))
    throw invalid(`--client-id must be 1 to ${MAX_CLIENT_ID} characters`)
  const clientId = flags.clientId ?? auth.clientId
  if (flags.clientSecret !== undefined && !clientId) {
    throw invalid(
      `--client-secret-from-env: a client secret belongs to a pre-registered client, and ` +
        `connector "${key}" names none: give its id with --client-id (or auth.clientId in the manifest)`,
    )
  }
  if (flags.clientSecret === '') throw invalid('--client-secret-from-env: the variable is empty')
  return { client_id: clientId!, ...(flags.clientSecret !== undefined ? { client_secret: flags.clientSecret } : {}) }
}

function invalid(message: string): TuttiError {
  return new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)
}
