import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Bystander } from '../support/bystander.js'
import { eventually, until } from '../support/eventually.js'
import { installed, prepared } from '../support/in-process.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import {
  FOLLOW_BROWSER,
  oauthConnector,
  startOAuthFixture,
  stateFiles,
  type OAuthFixture,
} from '../support/oauth-fixture.js'
import { cleanupState, REPO, tempStateDir, tutti, type RunResult } from '../support/tutti.js'

const FORGING_BROWSER = path.join(REPO, 'test/fixtures/oauth/forging-browser.mjs')

// Hardening round 3, OAuth (issue 20, items 1, 4, 6 and 7): an authorization
// server that changes its metadata, hangs or sends huge tokens, and a page that
// forges the redirect. The connector signs in as a confidential client
// (client_secret_basic), so the client secret is at stake as well as the tokens.
describe('round 3: OAuth that cannot be steered', () => {
  const CLIENT = { client_id: 'tutti-vault', client_secret: `basic-${randomBytes(18).toString('base64url')}` }
  const clientFlags = ['--client-id', CLIENT.client_id, '--client-secret-from-env', 'VAULT_SECRET']
  let dir: string
  let fx: OAuthFixture
  let by: Bystander
  let binding: Binding
  const outputs: string[] = []
  const opened = path.join(os.tmpdir(), `tutti-round3-opened-${process.pid}.log`)
  const run = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> => {
    const res = await tutti(dir, args, { env: { FOLLOW_BROWSER_LOG: opened, ...env } })
    outputs.push(res.stdout, res.stderr)
    return res
  }
  const signIn = (browser = FOLLOW_BROWSER, env: NodeJS.ProcessEnv = {}) =>
    // a bound on the wait for the browser: a sign-in that should fail must not wait out the default
    run(['connector', 'connect', 'vault', '--browser', browser, '--json', '--sign-in-timeout', '60', ...clientFlags], {
      VAULT_SECRET: CLIENT.client_secret,
      ...env,
    })
  const grantsFile = () => path.join(dir, 'oauth-grants.json')
  /** The grant store's bytes (null: none yet), to prove a refused sign-in changed nothing. */
  const grantsBytes = () => (fs.existsSync(grantsFile()) ? fs.readFileSync(grantsFile()) : null)
  const grants = () => JSON.parse(fs.readFileSync(grantsFile(), 'utf8')).connectors
  /** Rewrite the grant as a tutti from before pinning left it. */
  const unpin = () => {
    const doc = JSON.parse(fs.readFileSync(grantsFile(), 'utf8'))
    delete doc.connectors.vault.authorizationServer
    fs.writeFileSync(grantsFile(), JSON.stringify(doc), { mode: 0o600 })
  }
  const whoami = async (): Promise<string> => {
    const client = await modernClient(binding)
    try {
      return JSON.stringify(await client.callTool({ name: 'vault_whoami', arguments: {} }))
    } catch (err) {
      return (err as Error).message
    } finally {
      await client.close()
    }
  }
  const mcpState = async (): Promise<{ status?: string; reason?: string }> => {
    const res = await run(['connector', 'available', '--json'])
    const vault = JSON.parse(res.stdout).connectors.find((c: { key: string }) => c.key === 'vault')
    return vault?.interfaces.find((i: { kind: string }) => i.kind === 'mcp') ?? {}
  }
  const errorOf = (res: RunResult) => JSON.parse(res.stdout).error as { code: string; message: string }

  beforeAll(async () => {
    fx = await startOAuthFixture({
      FIXTURE_OAUTH_PRE_REGISTERED: JSON.stringify({ ...CLIENT, token_endpoint_auth_method: 'client_secret_basic' }),
    })
    dir = tempStateDir('round3-oauth')
    by = await Bystander.start(dir)
    binding = (await prepared(dir, { session: 'r3' })).mcpServers[0]!
    // throws where the CLI would exit non-zero
    await installed(dir, oauthConnector('vault', fx.urls.mcp))
  })
  // each attack starts from an honest server, whatever the one before left
  beforeEach(async () => {
    await fx.control({ names: 'real', metadata: {}, hangToken: false, tokenBytes: 0 })
  })
  afterAll(async () => {
    fx?.child.kill()
    fs.rmSync(opened, { force: true })
    await cleanupState(dir)
  })

  it(
    '1: after sign-in the resource names another authorization server: ' +
      'refresh and revocation go to the pinned one',
    async () => {
      const res = await signIn()
      expect(res.code, res.stdout + res.stderr).toBe(0)
      const pinned = grants().vault.authorizationServer
      await fx.control({ names: 'other' })
      const before = await fx.stats()
      await fx.control({ expireAccess: true })
      expect(await whoami()).toContain('authorized as ada')
      const after = await fx.stats()
      expect(after.grants.refresh_token).toBe(before.grants.refresh_token + 1)
      await by.expectServing()

      const held = after.issued.slice(-2)
      const off = await run(['connector', 'disconnect', 'vault', '--json'])
      expect(off.code, off.stdout).toBe(0)
      expect(JSON.parse(off.stdout).revocation).toEqual({ revoked: true, endpoint: `${fx.urls.as}/revoke` })
      expect((await fx.stats()).revoked).toEqual(expect.arrayContaining(held))
      // the other server was never even asked for its metadata
      expect((await fx.stats()).other).toEqual([])
      await by.expectServing()
      expect(pinned).toMatchObject({ issuer: fx.urls.as, metadata: { token_endpoint: `${fx.urls.as}/token` } })
    },
  )

  it(
    '1: a grant from before pinning is pinned when its issuer matches, ' +
      'and refused when the resource names another',
    async () => {
      expect((await signIn()).code).toBe(0)
      unpin()
      await fx.control({ expireAccess: true })
      expect(await whoami()).toContain('authorized as ada')
      expect(grants().vault.authorizationServer).toMatchObject({ issuer: fx.urls.as })

      unpin()
      await fx.control({ names: 'other', expireAccess: true })
      expect(await whoami()).toMatch(/needs a new sign-in|sign-in required|not signed in|needs-auth/)
      const state = await eventually(mcpState, (s) => s.status === 'needs-auth')
      expect(state).toMatchObject({
        status: 'needs-auth',
        reason:
          `the server now names the authorization server ${fx.urls.other}, not ${fx.urls.as}, ` +
          `which issued its tokens (tutti connector connect vault)`,
      })
      const off = await run(['connector', 'disconnect', 'vault', '--json'])
      expect(off.code, off.stdout).toBe(0)
      expect(JSON.parse(off.stdout).revocation).toEqual({
        revoked: false,
        reason:
          `the server now names the authorization server ${fx.urls.other}, ` +
          `not ${fx.urls.as}, which issued the tokens`,
      })
      // discovery only: no token, no client authentication, no revocation
      const other = (await fx.stats()).other as Array<{ method: string; path: string }>
      expect(other.length).toBeGreaterThan(0)
      expect(other.every((r) => r.method === 'GET' && r.path.startsWith('/.well-known/'))).toBe(true)
      await by.expectServing()
    },
  )

  it(
    '4, 6: an authorization URL of file:, smb: ' +
      'or vscode:, or a plain-http endpoint elsewhere, exits 2 and opens nothing',
    async () => {
      const grantsBefore = grantsBytes()
      // the follow browser writes every URL it is started with here: the sign-ins before this one did
      fs.rmSync(opened, { force: true })
      const cases: Array<[string, string, string]> = [
        [
          'authorization_endpoint',
          'file:///etc/passwd',
          'its scheme file: is neither https: nor http: on a loopback address',
        ],
        ['authorization_endpoint', 'smb://attacker.example/share', 'its scheme smb: is neither'],
        ['authorization_endpoint', 'vscode://evil.extension/run?x=1', 'its scheme vscode: is neither'],
        [
          'authorization_endpoint',
          'http://as.example.com/authorize',
          'it is plain http: and not on a loopback address',
        ],
        ['token_endpoint', 'http://tokens.example.com/token', 'it is plain http: and not on a loopback address'],
      ]
      for (const [field, url, why] of cases) {
        await fx.control({ metadata: { [field]: url } })
        const res = await signIn()
        expect(res.code, `${url}: ${res.stdout}${res.stderr}`).toBe(2)
        expect(errorOf(res)).toMatchObject({
          code: 'OAUTH_SIGN_IN_FAILED',
          message: expect.stringContaining(`${field} ${url} is refused: ${why}`),
        })
        expect(res.stderr).not.toContain('Open this URL')
        expect(fs.existsSync(opened), `the browser was started for ${url}`).toBe(false)
        await by.expectServing()
      }
      await fx.control({ metadata: {} })
      expect(grantsBytes()).toEqual(grantsBefore)
    },
  )

  it('6: a token endpoint that never answers ends the sign-in at the OAuth timeout, nothing stored', async () => {
    const grantsBefore = grantsBytes()
    await fx.control({ hangToken: true })
    const pending = signIn()
    expect(await until(async () => (await fx.stats()).hungTokenRequests > 0)).toBe(true)
    await by.expectServing()
    const res = await pending
    await fx.control({ hangToken: false })
    expect(res.code, res.stdout + res.stderr).toBe(2)
    expect(errorOf(res).message).toMatch(
      new RegExp(`${fx.urls.as}/token did not answer within 10 s; nothing was stored`),
    )
    expect(grantsBytes()).toEqual(grantsBefore)
  })

  it('6: a 10 MB token and a 20 KB token are refused at sign-in with the reason, nothing stored', async () => {
    const grantsBefore = grantsBytes()
    await fx.control({ tokenBytes: 10_000_000 })
    const huge = await signIn()
    expect(huge.code, huge.stdout + huge.stderr).toBe(2)
    expect(errorOf(huge).message).toContain(`${fx.urls.as}/token answered with more than 256 KiB; nothing was stored`)
    await fx.control({ tokenBytes: 20_000 })
    const large = await signIn()
    expect(large.code, large.stdout + large.stderr).toBe(2)
    expect(errorOf(large).message).toContain(
      'issued an access_token of 20000 bytes (tutti accepts at most 16 KiB); nothing was stored',
    )
    await fx.control({ tokenBytes: 0 })
    expect(grantsBytes()).toEqual(grantsBefore)
    expect(await mcpState()).toMatchObject({ status: 'needs-auth' })
    await by.expectServing()
  })

  it('6: a refresh that brings an oversized token leaves the grant needs-auth, not ready', async () => {
    expect((await signIn()).code).toBe(0)
    const kept = grants().vault.tokens.access_token
    await fx.control({ tokenBytes: 20_000, expireAccess: true })
    expect(await whoami()).toMatch(/needs a new sign-in/)
    const state = await eventually(mcpState, (s) => s.status === 'needs-auth')
    expect(state.reason).toContain('issued an access_token of 20000 bytes (tutti accepts at most 16 KiB)')
    expect(grants().vault.tokens.access_token).toBe(kept)
    await fx.control({ tokenBytes: 0 })
    await by.expectServing()
  })

  it('7: forged authorization responses are answered 400 and ignored; the real one still signs in', async () => {
    const log = path.join(os.tmpdir(), `tutti-round3-forge-${process.pid}.log`)
    const res = await signIn(FORGING_BROWSER, { FORGE_LOG: log })
    expect(res.code, res.stdout + res.stderr).toBe(0)
    expect(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)).toEqual([
      '400 code=forged&state=forged',
      '400 code=forged',
      '400 error=access_denied&state=x',
      'followed',
    ])
    expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'ready' })
    expect(await whoami()).toContain('authorized as ada')
    await by.expectServing()
  })

  it(
    'no token or client secret reached the other server, ' + 'another state file, the daemon log or any output',
    async () => {
      const s = await fx.stats()
      const basic = Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')
      const secrets: string[] = [CLIENT.client_secret, basic, ...s.issued.filter((t: string) => t.length <= 20_000)]
      const texts: Array<[string, string]> = outputs.map((o, i) => [`cli output ${i}`, o])
      stateFiles(dir, texts)
      for (const r of s.other)
        texts.push([`other server ${r.method} ${r.path}`, `${r.query} ${r.authorization ?? ''} ${r.body}`])
      expect(texts.some(([where]) => where.endsWith('daemon.log'))).toBe(true)
      const leaks = texts.flatMap(([where, text]) =>
        secrets.filter((t) => text.includes(t)).map((t) => `${where}: ${t.slice(0, 6)}…`),
      )
      expect(leaks).toEqual([])
    },
  )
})
