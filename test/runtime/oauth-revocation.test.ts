import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import type { OAuthGrant } from '../../src/runtime/oauth/grant-store.js'
import { revokeGrant } from '../../src/runtime/oauth/revocation.js'

// disconnect's revocation (RFC 7009) at the authorization server that issued
// the tokens, never at one the resource names later; where it cannot happen
// (no endpoint, an endpoint that refuses, one that is gone, no tokens) a
// reason, never a throw: disconnect forgets the tokens either way. Two
// authorization servers: the real one and one the resource may switch to.
interface Seen {
  server: 'real' | 'other'
  path: string
  auth?: string
  body: string
}
const seen: Seen[] = []
let mode: 'none' | 'refuse' | 'ok' | 'redirect' = 'ok'
let names: 'real' | 'other' = 'real'
const bases = { real: '', other: '' }

const serve = (server: 'real' | 'other') =>
  http.createServer((req, res) => {
    const base = bases[server]
    const url = new URL(req.url ?? '/', base)
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      seen.push({
        server,
        path: url.pathname,
        ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
        body,
      })
      const json = (status: number, doc: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc))
      if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
        return json(200, { resource: `${bases.real}/mcp`, authorization_servers: [bases[names]] })
      }
      if (url.pathname === '/.well-known/oauth-authorization-server') return json(200, metadata(base))
      if (url.pathname === '/revoke' && mode === 'redirect')
        return res.writeHead(307, { location: `${bases.other}/revoke` }).end()
      if (url.pathname === '/revoke') return res.writeHead(mode === 'refuse' ? 503 : 200).end()
      res.writeHead(404).end()
    })
  })
const metadata = (base: string) => ({
  issuer: base,
  authorization_endpoint: `${base}/authorize`,
  token_endpoint: `${base}/token`,
  response_types_supported: ['code'],
  ...(mode === 'none'
    ? {}
    : { revocation_endpoint: `${base}/revoke`, revocation_endpoint_auth_methods_supported: ['client_secret_basic'] }),
})
const servers = { real: serve('real'), other: serve('other') }

beforeAll(async () => {
  for (const name of ['real', 'other'] as const) {
    await new Promise<void>((resolve) => servers[name].listen(0, '127.0.0.1', resolve))
    bases[name] = `http://127.0.0.1:${(servers[name].address() as AddressInfo).port}`
  }
})
afterAll(async () => {
  for (const server of Object.values(servers)) await new Promise<void>((resolve) => server.close(() => resolve()))
})
beforeEach(() => {
  seen.length = 0
  mode = 'ok'
  names = 'real'
})

/** A grant as a sign-in leaves it: tokens stamped with their issuer, the authorization server pinned. */
const grant = (): OAuthGrant => ({
  serverUrl: `${bases.real}/mcp`,
  tokens: { access_token: 'at-1', refresh_token: 'rt-1', token_type: 'Bearer', issuer: bases.real },
  preRegistered: { client_id: 'cli+ent', client_secret: 's:e+cret' },
  authorizationServer: { issuer: bases.real, url: bases.real, metadata: metadata(bases.real) },
})
/** A grant from before pinning. */
const unpinned = (): OAuthGrant => {
  const { authorizationServer: _, ...rest } = grant()
  return rest
}
const secrets = [
  'at-1',
  'rt-1',
  encodeURIComponent('s:e+cret'),
  Buffer.from('cli%2Bent:s%3Ae%2Bcret').toString('base64'),
]
const nothingReached = (server: 'real' | 'other') => {
  const texts = seen.filter((s) => s.server === server).map((s) => `${s.auth ?? ''} ${s.body}`)
  for (const secret of secrets) expect(texts.join('\n'), secret).not.toContain(secret)
}

it('revokes the refresh token, then the access token, with the client secret URL-encoded in Basic auth', async () => {
  expect(await revokeGrant(grant())).toEqual({ revoked: true, endpoint: `${bases.real}/revoke` })
  expect(seen.map((s) => new URLSearchParams(s.body).get('token'))).toEqual(['rt-1', 'at-1'])
  expect(seen[0]!.auth).toBe(`Basic ${Buffer.from('cli%2Bent:s%3Ae%2Bcret').toString('base64')}`)
  // the pinned endpoint: no discovery at all
  expect(seen.map((s) => s.path)).toEqual(['/revoke', '/revoke'])
})

it('a resource that now names another authorization server gets nothing: the pinned one revokes', async () => {
  names = 'other'
  expect(await revokeGrant(grant())).toEqual({ revoked: true, endpoint: `${bases.real}/revoke` })
  expect(seen.filter((s) => s.server === 'other')).toEqual([])
})

it('a grant from before pinning revokes where discovery leads only when that is the issuer of its tokens', async () => {
  expect(await revokeGrant(unpinned())).toEqual({ revoked: true, endpoint: `${bases.real}/revoke` })
  seen.length = 0
  names = 'other'
  expect(await revokeGrant(unpinned())).toEqual({
    revoked: false,
    reason: `the server now names the authorization server ${bases.other}, not ${bases.real}, which issued the tokens`,
  })
  expect(seen.filter((s) => s.path === '/revoke')).toEqual([])
  nothingReached('other')
  const { issuer: _, ...unstamped } = unpinned().tokens!
  expect(await revokeGrant({ ...unpinned(), tokens: unstamped })).toEqual({
    revoked: false,
    reason: 'the grant does not record which authorization server issued its tokens',
  })
})

it(
  'no revocation endpoint, one that refuses or redirects, ' +
    'a server that is gone, no tokens: a reason, never a throw',
  async () => {
    mode = 'none'
    expect(
      await revokeGrant({
        ...grant(),
        authorizationServer: { ...grant().authorizationServer!, metadata: metadata(bases.real) },
      }),
    ).toEqual({
      revoked: false,
      reason: `the authorization server ${bases.real} offers no revocation endpoint`,
    })
    mode = 'refuse'
    expect(await revokeGrant(grant())).toEqual({
      revoked: false,
      reason: `the revocation endpoint ${bases.real}/revoke answered 503`,
    })
    // a redirect would carry the refresh token and the client secret to wherever it points
    mode = 'redirect'
    seen.length = 0
    expect(await revokeGrant(grant())).toEqual({
      revoked: false,
      reason: expect.stringMatching(
        /could not be reached: .*answered with a redirect \(307\); a request that carries credentials is not sent on/,
      ),
    })
    nothingReached('other')
    const gone = { ...unpinned(), serverUrl: 'http://127.0.0.1:1/mcp' }
    expect(await revokeGrant(gone)).toMatchObject({
      revoked: false,
      reason: expect.stringMatching(/^the authorization server could not be discovered: /),
    })
    expect(await revokeGrant({ serverUrl: `${bases.real}/mcp` })).toEqual({
      revoked: false,
      reason: 'no tokens were held',
    })
    const plain = {
      ...grant().authorizationServer!,
      metadata: { ...metadata(bases.real), revocation_endpoint: 'http://as.example.com/revoke' },
    }
    expect(await revokeGrant({ ...grant(), authorizationServer: plain })).toEqual({
      revoked: false,
      reason:
        'the revocation endpoint http://as.example.com/revoke is not used: ' +
        'it is plain http: and not on a loopback address',
    })
  },
)
