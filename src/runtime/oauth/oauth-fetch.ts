/**
 * An authorization server answers a metadata, registration, token or
 * revocation request in well under this. One that never answers must not
 * hold `connect`, `disconnect` or a tool call that refreshes forever.
 */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000

/**
 * Metadata documents and token responses are a few KiB. A larger answer is
 * refused before it is parsed, stored or sent anywhere (a 10 MB "token"
 * made every later call fail with `fetch failed`).
 */
export const OAUTH_BODY_LIMIT_BYTES = 256 * 1024

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

/** An OAuth request that was cut off by tutti: too slow, too large, or redirected with credentials. */
export class OAuthHttpError extends Error {
  override name = 'OAuthHttpError'
}

/** Where a request went, for a message: origin and path, never a query. */
const where = (url: URL): string => `${url.origin}${url.pathname}`

const sameEndpoint = (a: URL, b: URL): boolean => a.origin === b.origin && a.pathname === b.pathname

/**
 * The fetch an OAuth-protected connection uses. The MCP endpoint's own
 * requests (tool calls, streams: they have their own timeouts) get the
 * manifest's headers and pass through. Every other request of the flow goes
 * to the authorization server or a metadata URL: it gets none of those
 * headers (they are the MCP server's credentials), a timeout, a cap on the
 * body, and, when it posts credentials, no redirects.
 */
export function oauthFetch(
  resource: string | URL,
  resourceHeaders: Record<string, string> = {},
  base: FetchLike = fetch,
): FetchLike {
  const mcp = new URL(resource)
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input)
    if (sameEndpoint(url, mcp))
      return base(input, { ...init, headers: withResourceHeaders(init?.headers, resourceHeaders) })
    return boundedRequest(base, url, init)
  }
}

function withResourceHeaders(given: RequestInit['headers'], resourceHeaders: Record<string, string>): Headers {
  const headers = new Headers(given)
  // what the SDK set (the bearer token, the protocol version) wins over the manifest's
  for (const [name, value] of Object.entries(resourceHeaders)) if (!headers.has(name)) headers.set(name, value)
  return headers
}

async function boundedRequest(base: FetchLike, url: URL, init: RequestInit | undefined): Promise<Response> {
  const timeout = AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS)
  const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout
  const posts = (init?.method ?? 'GET').toUpperCase() !== 'GET'
  // a 307/308 would post the code, the refresh token or the client secret again, to wherever it points
  const redirect: RequestInit['redirect'] = posts ? 'manual' : (init?.redirect ?? 'follow')
  try {
    const res = await base(url, { ...init, signal, redirect })
    if (posts && res.status >= 300 && res.status < 400) {
      // the body is abandoned: a failed cancel changes nothing about the error thrown next
      await res.body?.cancel().catch(() => undefined)
      throw new OAuthHttpError(
        `${where(url)} answered with a redirect (${res.status}); a request that carries credentials is not sent on`,
      )
    }
    return await capped(res, url)
  } catch (err) {
    if (timeout.aborted && !init?.signal?.aborted) {
      throw new OAuthHttpError(`${where(url)} did not answer within ${OAUTH_REQUEST_TIMEOUT_MS / 1000} s`)
    }
    throw err
  }
}

/** The response with its body read, up to the cap; over it, an error and the rest is not read. */
async function capped(res: Response, url: URL): Promise<Response> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN)
  const tooLarge = () =>
    new OAuthHttpError(`${where(url)} answered with more than ${OAUTH_BODY_LIMIT_BYTES / 1024} KiB`)
  if (declared > OAUTH_BODY_LIMIT_BYTES) {
    // the body is abandoned: a failed cancel changes nothing about the error thrown next
    await res.body?.cancel().catch(() => undefined)
    throw tooLarge()
  }
  const chunks: Uint8Array[] = []
  let size = 0
  if (res.body) {
    const reader = res.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > OAUTH_BODY_LIMIT_BYTES) {
        // the body is abandoned: a failed cancel changes nothing about the error thrown next
        await reader.cancel().catch(() => undefined)
        throw tooLarge()
      }
      chunks.push(value)
    }
  }
  const noBody = res.status === 204 || res.status === 205 || res.status === 304
  return new Response(noBody ? null : Buffer.concat(chunks), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  })
}
