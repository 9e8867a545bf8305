import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { GrantProvider } from '../../src/runtime/oauth/grant-provider.js'
import { OAuthGrantStore } from '../../src/runtime/oauth/grant-store.js'
import { preRegisteredClient } from '../../src/runtime/oauth/pre-registered-client.js'
import { statePaths } from '../../src/runtime/paths.js'

const oauth = { kind: 'oauth' as const }

it(
  'connect flags name a pre-registered client: --client-id beats the manifest, a secret needs an id, bad input is ' +
    'refused by flag',
  () => {
    expect(preRegisteredClient('k', oauth, undefined)).toBeUndefined()
    expect(preRegisteredClient('k', oauth, {})).toBeUndefined()
    expect(preRegisteredClient('k', { ...oauth, clientId: 'from-manifest' }, { clientSecret: 's3cret' })).toEqual({
      client_id: 'from-manifest',
      client_secret: 's3cret',
    })
    expect(
      preRegisteredClient('k', { ...oauth, clientId: 'from-manifest' }, { clientId: 'flag', clientSecret: 's3cret' }),
    ).toEqual({ client_id: 'flag', client_secret: 's3cret' })
    expect(preRegisteredClient('k', oauth, { clientId: 'public' })).toEqual({ client_id: 'public' })
    expect(() => preRegisteredClient('k', oauth, { clientSecret: 's3cret' })).toThrow(
      /^--client-secret-from-env: .*give its id with --client-id/,
    )
    expect(() => preRegisteredClient('k', oauth, { clientId: 'x', clientSecret: '' })).toThrow(
      '--client-secret-from-env: the variable is empty',
    )
    expect(() => preRegisteredClient('k', oauth, { clientId: '' })).toThrow(/^--client-id must be 1 to 1024 characters/)
    expect(() => preRegisteredClient('k', { kind: 'none' }, { clientId: 'x' })).toThrow(
      '--client-id: connector "k" does not sign in with OAuth (its auth.kind is "none")',
    )
  },
)

it(
  'the client a provider offers: the flags, else the stored pre-registered one, else the manifest id, else the ' +
    'stored registration; the secret is stored only with tokens',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-oauth-client-'))
    try {
      const store = new OAuthGrantStore(statePaths(dir))
      const serverUrl = 'https://mcp.example.com/mcp'
      const signIn = {
        kind: 'sign-in' as const,
        redirectUrl: 'http://127.0.0.1:1/oauth/callback',
        state: 's',
        authorizationUrl: () => undefined,
      }
      const daemon = { kind: 'daemon' as const, needsAuth: () => undefined }
      await store.update('k', () => ({ serverUrl, client: { client_id: 'registered' } }))
      expect(await new GrantProvider(store, { key: 'k', serverUrl }, daemon).clientInformation()).toEqual({
        client_id: 'registered',
      })
      expect(
        await new GrantProvider(store, { key: 'k', serverUrl, clientId: 'manifest' }, daemon).clientInformation(),
      ).toEqual({ client_id: 'manifest' })

      const flags = { client_id: 'pre', client_secret: 'the-secret' }
      const provider = new GrantProvider(
        store,
        { key: 'k', serverUrl, clientId: 'manifest', preRegistered: flags },
        signIn,
      )
      expect(await provider.clientInformation()).toEqual(flags)
      // the SDK stamps the issuer on it: remembered, not written (nothing is stored before the tokens)
      await provider.saveClientInformation({ ...flags, issuer: 'https://as.example.com' } as never)
      expect(await provider.clientInformation()).toEqual({ ...flags, issuer: 'https://as.example.com' })
      expect((await store.get('k'))?.preRegistered).toBeUndefined()
      await provider.saveTokens({ access_token: 'at', token_type: 'Bearer' })
      expect((await store.get('k'))?.preRegistered).toEqual(flags)
      expect(fs.statSync(statePaths(dir).oauthGrantsJson).mode & 0o777).toBe(0o600)
      // the daemon, and a later sign-in without flags, use the stored one over the manifest's id
      expect(
        await new GrantProvider(store, { key: 'k', serverUrl, clientId: 'manifest' }, daemon).clientInformation(),
      ).toEqual(flags)
      expect(
        await new GrantProvider(store, { key: 'k', serverUrl, clientId: 'manifest' }, signIn).clientInformation(),
      ).toEqual(flags)
      // a refresh keeps it
      await new GrantProvider(store, { key: 'k', serverUrl }, daemon).saveTokens({
        access_token: 'at2',
        token_type: 'Bearer',
      })
      expect((await store.get('k'))?.preRegistered).toEqual(flags)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  },
)
