import { SdkHttpError } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'
import { probeSignIn } from '../oauth/sign-in-probe.js'
import type { HttpUpstreamSpec } from './http-transport.js'

/** The reason of a connector whose server wants an OAuth sign-in that has not happened. */
export const signInRequired = (key: string): string => `sign-in required: run tutti connector connect ${key}`

/** The server refused the connect with 401: it wants a token or credentials. */
export function isUnauthorized(err: unknown): boolean {
  return SdkHttpError.isInstance(err) && err.status === 401
}

/**
 * A remote upstream without an OAuth grant got a 401. When the server
 * offers OAuth (sign-in-probe.ts) the connector needs a sign-in, whatever
 * its manifest says (OAUTH_NEEDS_AUTH: nothing retries it until `connect`);
 * otherwise it wants credentials, and the reason says how to give them.
 * A manifest that declares credentials sent them: the reason says so.
 */
export async function unauthorizedFailure(spec: HttpUpstreamSpec, cause: unknown): Promise<TuttiError> {
  if (!spec.mayOfferOAuth) {
    // the manifest's credentials were sent and refused
    const refused = 'the server refused the credentials it was sent (HTTP 401)'
    const check = `check them (tutti connector connect ${spec.key} --env …)`
    return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `could not connect: ${refused}; ${check}`, { cause })
  }
  // a failed probe proves no OAuth: the credentials error below is the answer
  const probe = await probeSignIn(spec.url, spec.headers).catch(() => undefined)
  if (probe?.kind === 'oauth') return new TuttiError(ErrorCodes.OAUTH_NEEDS_AUTH, signInRequired(spec.key), { cause })
  const header = `tutti connector install --key ${spec.key} --header "Authorization: Bearer …" <url>`
  return new TuttiError(
    ErrorCodes.UPSTREAM_FAILED,
    'could not connect: the server requires credentials (HTTP 401) and offers no OAuth sign-in ' +
      `(no RFC 9728 metadata); give them as a header (${header}, or mcp.headers in the manifest)`,
    { cause },
  )
}
