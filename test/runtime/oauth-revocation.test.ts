import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { revokeGrant } from '../../src/runtime/oauth/revocation.js'

// disconnect's revocation (RFC 7009) where it cannot happen: no endpoint, an
// endpoint that refuses, one that is gone. Each says why, and none throws
// (disconnect forgets the tokens either way). And where it works: the
// refresh token first, with the client's secret URL-encoded in Basic auth.
let base = ''
let mode: 'none' | 'refuse' | 'ok' = 'ok'
const seen: Array<{ auth?: string; body: string }> = []
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', base)
  const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  if (url.pathname === '/.well-known/oauth-protected-resource/mcp') return json(200, { resource: `${base}/mcp`, authorization_servers: [base] })
  if (url.pathname === '/.well-known/oauth-authorization-server') {
    return json(200, {
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      response_types_supported: ['code'],
      ...(mode === 'none' ? {} : { revocation_endpoint: `${base}/revoke`, revocation_endpoint_auth_methods_supported: ['client_secret_basic'] }),
    })
  }
  if (url.pathname === '/revoke') {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization, body })
      res.writeHead(mode === 'refuse' ? 503 : 200).end()
    })
    return
  }
  res.writeHead(404).end()
})
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const grant = () => ({
  serverUrl: `${base}/mcp`,
  tokens: { access_token: 'at-1', refresh_token: 'rt-1', token_type: 'Bearer' },
  preRegistered: { client_id: 'cli+ent', client_secret: 's:e+cret' },
})

it('revokes the refresh token, then the access token, with the client secret URL-encoded in Basic auth', async () => {
  mode = 'ok'
  seen.length = 0
  expect(await revokeGrant(grant())).toEqual({ revoked: true, endpoint: `${base}/revoke` })
  expect(seen.map((s) => new URLSearchParams(s.body).get('token'))).toEqual(['rt-1', 'at-1'])
  expect(seen[0]!.auth).toBe(`Basic ${Buffer.from('cli%2Bent:s%3Ae%2Bcret').toString('base64')}`)
})

it('no revocation endpoint, an endpoint that refuses, an authorization server that is gone: the reason, never a throw', async () => {
  mode = 'none'
  expect(await revokeGrant(grant())).toEqual({ revoked: false, reason: 'the authorization server offers no revocation endpoint' })
  mode = 'refuse'
  expect(await revokeGrant(grant())).toEqual({ revoked: false, reason: `the revocation endpoint ${base}/revoke answered 503` })
  expect(await revokeGrant({ ...grant(), serverUrl: 'http://127.0.0.1:1/mcp' })).toMatchObject({ revoked: false, reason: expect.stringMatching(/^the authorization server could not be discovered: /) })
  expect(await revokeGrant({ serverUrl: `${base}/mcp` })).toEqual({ revoked: false, reason: 'no tokens were held' })
})
