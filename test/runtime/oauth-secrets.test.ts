import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { OutputRedactor } from '../../src/cli/command-output.js'
import { GrantProvider } from '../../src/runtime/oauth/grant-provider.js'
import { grantSecrets, OAuthGrantStore } from '../../src/runtime/oauth/grant-store.js'
import { statePaths } from '../../src/runtime/paths.js'

// An OAuth grant's secrets are redacted by value wherever an upstream or an
// authorization server could echo one: in the daemon's log (the provider
// tells it each token it obtains) and in every CLI output (read from
// oauth-grants.json like credentials.json).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-oauth-secrets-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const serverUrl = 'https://mcp.example.com/mcp'

it('grantSecrets: the tokens, the registered client’s secret and the pre-registered secret, nothing else', () => {
  expect(
    grantSecrets({
      tokens: { access_token: 'at-1111', refresh_token: 'rt-2222', token_type: 'Bearer', scope: 'mcp:basic' } as never,
      client: { client_id: 'public-id', client_secret: 'cs-3333' },
      preRegistered: { client_id: 'pre-id', client_secret: 'ps-4444' },
    }).sort(),
  ).toEqual(['at-1111', 'cs-3333', 'ps-4444', 'rt-2222'])
  expect(grantSecrets(undefined)).toEqual([])
})

it(
  'the daemon’s provider hands every token it saves (a refresh) and a registration’s secret to the log redactor ' +
    'before storing them',
  async () => {
    const store = new OAuthGrantStore(statePaths(path.join(dir, 'state')))
    const learned: string[] = []
    const provider = new GrantProvider(
      store,
      { key: 'k', serverUrl },
      { kind: 'daemon', needsAuth: () => undefined, learned: (s) => learned.push(...s) },
    )
    await provider.saveClientInformation({ client_id: 'dyn', client_secret: 'registered-secret' } as never)
    await provider.saveTokens({
      access_token: 'refreshed-access',
      refresh_token: 'rotated-refresh',
      token_type: 'Bearer',
    })
    expect(learned).toEqual(['registered-secret', 'refreshed-access', 'rotated-refresh'])
    expect((await store.get('k'))?.tokens?.access_token).toBe('refreshed-access')
  },
)

it('CLI output: every value of credentials.json and every secret of oauth-grants.json is redacted', () => {
  const credentials = path.join(dir, 'credentials.json')
  const grants = path.join(dir, 'oauth-grants.json')
  fs.writeFileSync(credentials, JSON.stringify({ connectors: { a: { API_KEY: 'key-5555' } } }))
  fs.writeFileSync(
    grants,
    JSON.stringify({
      schemaVersion: 1,
      connectors: {
        b: {
          serverUrl,
          tokens: { access_token: 'at-6666', refresh_token: 'rt-7777', token_type: 'Bearer', scope: 'mcp:basic' },
          preRegistered: { client_id: 'pre-id', client_secret: 'ps-8888' },
        },
      },
    }),
  )
  const redactor = new OutputRedactor(() => ({ credentials, grants }))
  const out = redactor.redact('key-5555 at-6666 rt-7777 ps-8888 pre-id mcp:basic Bearer')
  expect(out).toBe('[redacted] [redacted] [redacted] [redacted] pre-id mcp:basic Bearer')
  // absent or unreadable files redact nothing and do not throw
  expect(
    new OutputRedactor(() => ({
      credentials: path.join(dir, 'none.json'),
      grants: path.join(dir, 'none-2.json'),
    })).redact('at-6666'),
  ).toBe('at-6666')
})
