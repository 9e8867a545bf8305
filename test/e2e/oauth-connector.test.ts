import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeConnector } from '../support/connector-fixture.js'
import { eventually } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import {
  FOLLOW_BROWSER,
  oauthConnector,
  startOAuthFixture,
  stateFiles,
  type FixtureUrls,
} from '../support/oauth-fixture.js'
import { cleanupState, connectorState, tempStateDir, tutti, type RunResult } from '../support/tutti.js'

const BROWSER = FOLLOW_BROWSER

describe('OAuth connectors: sign-in, refresh, needs-auth, revocation', () => {
  let dir: string
  let fixture: ChildProcess
  let bare: ChildProcess
  let urls: FixtureUrls
  let bareUrls: FixtureUrls
  let binding: Binding
  const browserLog = path.join(os.tmpdir(), `tutti-oauth-browser-${process.pid}.log`)
  /** Every CLI output of this file: the last test looks for token values in it. */
  const outputs: string[] = []
  const run = async (args: string[]): Promise<RunResult> => {
    const res = await tutti(dir, args, { env: { FOLLOW_BROWSER_LOG: browserLog } })
    outputs.push(res.stdout, res.stderr)
    return res
  }
  const connect = (key: string, ...extra: string[]) =>
    run(['connector', 'connect', key, '--browser', BROWSER, '--json', ...extra])
  const asControl = async (change: object) =>
    (await fetch(`${urls.as}/control`, { method: 'POST', body: JSON.stringify(change) })).json()
  const stats = async (): Promise<any> => (await fetch(`${urls.as}/control`)).json()
  /**
   * What `connector available` says of one connector: its MCP interface's status and reason, its CLI's status, its
   * Skills.
   */
  const available = async (key: string): Promise<any> => {
    const res = await run(['connector', 'available', '--json'])
    const c = JSON.parse(res.stdout).connectors.find((x: { key: string }) => x.key === key)
    if (!c) return undefined
    const mcp = c.interfaces.find((i: { kind: string }) => i.kind === 'mcp')
    return {
      status: mcp?.status,
      reason: mcp?.reason,
      cli: c.interfaces.find((i: { kind: string }) => i.kind === 'cli')?.status,
      skills: c.skills.map((k: { name: string }) => k.name),
    }
  }
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const client = await modernClient(binding)
    try {
      return await client.callTool({ name, arguments: args })
    } finally {
      await client.close()
    }
  }
  /** A call that is expected to fail: what its caller reads (an error result or a thrown MCP error). */
  const callFailure = (name: string) =>
    call(name).then(
      (r) => JSON.stringify(r),
      (err: Error) => err.message,
    )

  beforeAll(async () => {
    ;({ child: fixture, urls } = await startOAuthFixture())
    ;({ child: bare, urls: bareUrls } = await startOAuthFixture({ FIXTURE_OAUTH_NO_METADATA: '1' }))
    dir = tempStateDir('oauth')
    binding = (await prepared(dir, { session: 'oauth' })).mcpServers[0]!
    await installed(dir, faultConnector({ key: 'other' }))
  })
  afterAll(async () => {
    fixture?.kill()
    bare?.kill()
    fs.rmSync(browserLog, { force: true })
    await cleanupState(dir)
  })

  it(
    'an oauth connector is installed needs-auth, ' +
      'its CLI and Skills usable, and rejected on stdio naming auth.kind',
    async () => {
      const installed = await run(['connector', 'install', oauthConnector('remote', urls.mcp), '--json'])
      expect(installed.code).toBe(0)
      expect(await available('remote')).toEqual({
        status: 'needs-auth',
        reason: 'not signed in (tutti connector connect remote)',
        cli: 'ready',
        skills: ['remote-notes'],
      })
      const bad = await run([
        'connector',
        'install',
        makeConnector({
          schemaVersion: 1,
          key: 'badauth',
          name: 'B',
          version: '1',
          auth: { kind: 'oauth' },
          mcp: { transport: 'stdio', command: 'node' },
        }),
        '--json',
      ])
      expect(bad.code).toBe(2)
      expect(JSON.parse(bad.stdout).error.message).toMatch(/auth\.kind.*mcp\.transport "http"/)
    },
  )

  it(
    'connect signs in through the browser command, ' + 'and a call reaches the protected server with the token',
    async () => {
      const res = await connect('remote')
      expect(res.code, res.stdout + res.stderr).toBe(0)
      expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'ready', tools: 2 })
      // the URL is printed on stderr even with --json, and the browser got exactly it
      const printed = /Open this URL to sign in to remote:\n {2}(\S+)/.exec(res.stderr)?.[1]
      expect(printed).toMatch(new RegExp(`^${urls.as}/authorize\\?`))
      expect(fs.readFileSync(browserLog, 'utf8').split('\n')[0]).toBe(printed)
      const s = await stats()
      expect(s.grants.authorization_code).toBe(1)
      expect(s.lastAuthorize).toMatchObject({
        code_challenge_method: 'S256',
        resource: urls.mcp,
        scope: 'mcp:basic',
        redirect_uri: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback$/),
      })
      expect(fs.statSync(path.join(dir, 'oauth-grants.json')).mode & 0o777).toBe(0o600)
      expect((await call('remote_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
      expect((await stats()).seenByMcp.at(-1)).toBe(s.issued[0])
      expect(await available('remote')).toMatchObject({ status: 'ready' })
    },
  )

  it('a 401 refreshes the token and the call goes through', async () => {
    const before = await stats()
    await asControl({ expireAccess: true })
    expect((await call('remote_whoami')).isError).toBeFalsy()
    const after = await stats()
    expect(after.unauthorized).toBeGreaterThan(before.unauthorized)
    expect(after.grants.refresh_token).toBe(before.grants.refresh_token + 1)
    expect(after.seenByMcp.at(-1)).toBe(after.issued.at(-2))
  })

  it('a token about to expire is refreshed before it is sent', async () => {
    // the next token says it expires at once (the server still takes it): every request refreshes first
    await asControl({ advertisedLifetime: 0, expireAccess: true })
    await call('remote_whoami')
    const before = await stats()
    expect((await call('remote_whoami')).isError).toBeFalsy()
    const after = await stats()
    expect(after.grants.refresh_token).toBeGreaterThan(before.grants.refresh_token)
    expect(after.unauthorized).toBe(before.unauthorized)
    await asControl({ advertisedLifetime: null })
  })

  it(
    'a refresh the server refuses makes it needs-auth with the reason and closes its upstream; the other ' +
      'connector, its CLI and Skills keep working',
    async () => {
      expect((await connectorState(dir, 'remote')).upstream).toBe('running')
      await asControl({ failRefresh: true, expireAccess: true })
      const client = await modernClient(binding)
      const failed = await client.callTool({ name: 'remote_whoami', arguments: {} }).then(
        (r) => JSON.stringify(r),
        (err: Error) => err.message,
      )
      await client.close()
      expect(failed).toMatch(/needs a new sign-in.*tutti connector connect remote/)
      const state = await eventually(
        () => available('remote'),
        (c) => c?.status === 'needs-auth',
      )
      expect(state).toEqual({
        status: 'needs-auth',
        reason: expect.stringMatching(/refused the stored grant.*tutti connector connect remote/),
        cli: 'ready',
        skills: ['remote-notes'],
      })
      // the route is withdrawn and the connection it used is closed, not kept until the next sign-in
      expect(
        (
          await eventually(
            () => connectorState(dir, 'remote'),
            (c) => c?.upstream !== 'running',
          )
        ).upstream,
      ).toBe('none')
      const seen = (await stats()).seenByMcp.length
      expect(await callFailure('remote_whoami')).toMatch(/remote_whoami/)
      expect((await stats()).seenByMcp.length).toBe(seen)
      expect((await call('other_echo', { message: 'still here' })).content).toEqual([
        { type: 'text', text: 'still here' },
      ])
      // doctor's fix is the sign-in, not an --env credential
      const doctor = JSON.parse((await run(['daemon', 'doctor', '--json'])).stdout)
      expect(doctor.findings).toContainEqual(
        expect.objectContaining({ check: 'health', connector: 'remote', fix: 'run `tutti connector connect remote`' }),
      )
      const shim = await new Promise<string>((resolve) => {
        const child = spawn(path.join(dir, 'bin', 'tutti-connector-remote'), [], {
          env: { ...process.env, TUTTI_STATE_DIR: dir },
        })
        let out = ''
        child.stdout.on('data', (d: Buffer) => (out += d.toString()))
        child.on('close', () => resolve(out))
      })
      expect(shim).toContain('remote cli works')
    },
  )

  it('connect signs in again and the connector is ready', async () => {
    await asControl({ failRefresh: false })
    const res = await connect('remote')
    expect(res.code, res.stdout + res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'ready' })
    expect((await call('remote_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
  })

  it(
    'a 403 insufficient_scope steps up once; no browser in the daemon, so it is needs-auth naming the scope; ' +
      'connect asks for it, and write succeeds',
    async () => {
      const before = await stats()
      expect(await callFailure('remote_write')).toContain(
        'needs a new sign-in: the server asks for scope that was not granted: ' +
          'mcp:write; run `tutti connector connect remote`',
      )
      const after = await stats()
      // bounded: the server saw one 403, and the authorization server neither a token request nor an authorization
      expect(after.forbidden - before.forbidden).toBe(1)
      expect(after.grants).toEqual(before.grants)
      expect(after.authorizations).toBe(before.authorizations)
      const state = await eventually(
        () => available('remote'),
        (c) => c?.status === 'needs-auth',
      )
      expect(state).toMatchObject({
        status: 'needs-auth',
        reason: 'the server asks for scope that was not granted: mcp:write (tutti connector connect remote)',
        cli: 'ready',
      })
      expect(
        (
          await eventually(
            () => connectorState(dir, 'remote'),
            (c) => c?.upstream !== 'running',
          )
        ).upstream,
      ).toBe('none')
      expect((await call('other_echo', { message: 'unaffected' })).content).toEqual([
        { type: 'text', text: 'unaffected' },
      ])

      const res = await connect('remote')
      expect(res.code, res.stdout + res.stderr).toBe(0)
      const signedIn = await stats()
      // one authorization, and it asked for the wider scope (the challenge of a fresh sign-in names only mcp:basic)
      expect(signedIn.authorizations).toBe(after.authorizations + 1)
      expect(signedIn.lastAuthorize.scope.split(' ').sort()).toEqual(['mcp:basic', 'mcp:write'])
      expect((await call('remote_write')).content).toEqual([{ type: 'text', text: 'written' }])
      expect((await call('remote_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
    },
  )

  it(
    'a server that refuses write whatever the scope: one refresh per call, then a clear error, never a loop; the ' +
      'connector stays ready',
    async () => {
      await asControl({ writeForbidden: true })
      for (let round = 0; round < 2; round++) {
        const before = await stats()
        expect(await callFailure('remote_write')).toMatch(/403 insufficient_scope after step-up re-authorization/)
        const after = await stats()
        // the token already holds the scope asked for: one re-authorization (a refresh), one retry, and the error
        expect(after.grants.refresh_token - before.grants.refresh_token).toBe(1)
        expect(after.grants.authorization_code).toBe(before.grants.authorization_code)
        expect(after.authorizations).toBe(before.authorizations)
        expect(after.forbidden - before.forbidden).toBe(2)
      }
      await asControl({ writeForbidden: false })
      expect(await available('remote')).toMatchObject({ status: 'ready' })
      expect((await call('remote_write')).content).toEqual([{ type: 'text', text: 'written' }])
    },
  )

  it('a sign-in that cannot complete exits 2 naming what failed, and the grant in use is kept', async () => {
    const noMetadata = await run(['connector', 'install', oauthConnector('bare', bareUrls.mcp), '--json'])
    expect(noMetadata.code).toBe(0)
    const bareConnect = await connect('bare')
    expect(bareConnect.code).toBe(2)
    expect(JSON.parse(bareConnect.stdout).error).toMatchObject({
      code: 'OAUTH_SIGN_IN_FAILED',
      message: expect.stringMatching(/mcp\.url http:\/\/127\.0\.0\.1:\d+\/mcp offers no OAuth metadata/),
    })

    await asControl({ redirect: false })
    const timeout = await connect('remote', '--sign-in-timeout', '1')
    expect(timeout.code).toBe(2)
    expect(JSON.parse(timeout.stdout).error.message).toMatch(
      new RegExp(
        `no authorization response reached http://127\\.0\\.0\\.1:\\d+/oauth/callback within 1 s` +
          `.*open ${urls.as}/authorize\\?\\S+ in a browser`,
      ),
    )

    // a response with another state is not this sign-in's: ignored, and the wait goes on to its end
    await asControl({ redirect: true, state: 'wrong' })
    const stale = await connect('remote', '--sign-in-timeout', '10')
    expect(stale.code, stale.stdout).toBe(2)
    expect(JSON.parse(stale.stdout).error.message).toMatch(
      /within 10 s \(ignored 1 with another state: forged or stale\)/,
    )
    const cases: Array<[object, RegExp]> = [
      [{ state: 'echo', iss: 'wrong' }, /issuer check failed/],
      [{ iss: 'correct', tokenError: 'invalid_grant' }, /authorization server refused \(invalid_grant\)/],
    ]
    for (const [change, message] of cases) {
      await asControl(change)
      const res = await connect('remote')
      expect(res.code, res.stdout).toBe(2)
      expect(JSON.parse(res.stdout).error).toMatchObject({
        code: 'OAUTH_SIGN_IN_FAILED',
        message: expect.stringMatching(message),
      })
    }
    await asControl({ tokenError: null })
    // none of them touched the grant the daemon uses
    expect((await call('remote_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
    expect(await available('remote')).toMatchObject({ status: 'ready' })
  })

  it('disconnect revokes the tokens at the authorization server and forgets them', async () => {
    const held = (await stats()).issued.slice(-2)
    const res = await run(['connector', 'disconnect', 'remote', '--json'])
    expect(res.code, res.stdout).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({
      disconnected: true,
      revocation: { revoked: true, endpoint: `${urls.as}/revoke` },
    })
    expect((await stats()).revoked).toEqual(expect.arrayContaining(held))
    expect(await available('remote')).toMatchObject({
      status: 'needs-auth',
      reason: expect.stringContaining('not signed in'),
    })
    const grants = JSON.parse(fs.readFileSync(path.join(dir, 'oauth-grants.json'), 'utf8'))
    expect(grants.connectors.remote.tokens).toBeUndefined()
  })

  it('no token value is in any other state file, the daemon log, the browser command or any CLI output', async () => {
    const tokens: string[] = (await stats()).issued
    expect(tokens.length).toBeGreaterThanOrEqual(6)
    const texts: Array<[string, string]> = outputs.map((o, i) => [`cli output ${i}`, o])
    texts.push(['browser argv', fs.readFileSync(browserLog, 'utf8')])
    stateFiles(dir, texts)
    expect(texts.some(([where]) => where.endsWith('daemon.log'))).toBe(true)
    const leaks = texts.flatMap(([where, text]) =>
      tokens.filter((t) => text.includes(t)).map((t) => `${where}: ${t.slice(0, 6)}…`),
    )
    expect(leaks).toEqual([])
  })
})

describe('OAuth connectors: a pre-registered confidential client (--client-id, --client-secret-from-env)', () => {
  const BASIC = {
    client_id: 'tutti-preregistered',
    client_secret: `basic-${randomBytes(18).toString('base64url')}`,
    token_endpoint_auth_method: 'client_secret_basic',
  }
  const POST = {
    client_id: 'tutti-post',
    client_secret: `post-${randomBytes(18).toString('base64url')}`,
    token_endpoint_auth_method: 'client_secret_post',
  }
  let dir: string
  let basicAs: ChildProcess
  let postAs: ChildProcess
  let basicUrls: FixtureUrls
  let postUrls: FixtureUrls
  let binding: Binding
  const outputs: string[] = []
  const run = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> => {
    const res = await tutti(dir, args, { env })
    outputs.push(res.stdout, res.stderr)
    return res
  }
  const connect = (key: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) =>
    run(['connector', 'connect', key, '--browser', BROWSER, '--json', ...extra], env)
  const stats = async (urls: FixtureUrls): Promise<any> => (await fetch(`${urls.as}/control`)).json()
  const grants = () => JSON.parse(fs.readFileSync(path.join(dir, 'oauth-grants.json'), 'utf8')).connectors
  const whoami = async (key: string) => {
    const client = await modernClient(binding)
    try {
      return (await client.callTool({ name: `${key}_whoami`, arguments: {} })).content
    } finally {
      await client.close()
    }
  }

  beforeAll(async () => {
    ;({ child: basicAs, urls: basicUrls } = await startOAuthFixture({
      FIXTURE_OAUTH_PRE_REGISTERED: JSON.stringify(BASIC),
    }))
    ;({ child: postAs, urls: postUrls } = await startOAuthFixture({
      FIXTURE_OAUTH_PRE_REGISTERED: JSON.stringify(POST),
    }))
    dir = tempStateDir('oauth-client')
    binding = (await prepared(dir, { session: 'oauth-client' })).mcpServers[0]!
    // throws where the CLI would exit non-zero
    await installed(dir, oauthConnector('vault', basicUrls.mcp))
  })
  afterAll(async () => {
    basicAs?.kill()
    postAs?.kill()
    await cleanupState(dir)
  })

  it('bad client flags exit 2 naming the flag, and a refused secret stores nothing', async () => {
    const noId = await connect('vault', ['--client-secret-from-env', 'VAULT_SECRET'], {
      VAULT_SECRET: BASIC.client_secret,
    })
    expect(noId.code).toBe(2)
    expect(JSON.parse(noId.stdout).error).toMatchObject({
      code: 'ARGUMENT_INVALID',
      message: expect.stringMatching(
        /^--client-secret-from-env: .*names none: give its id with --client-id \(or auth\.clientId in the manifest\)/,
      ),
    })
    const unset = await connect('vault', [
      '--client-id',
      BASIC.client_id,
      '--client-secret-from-env',
      'NOT_SET_ANYWHERE',
    ])
    expect(unset.code).toBe(2)
    expect(JSON.parse(unset.stdout).error.message).toBe(
      '--client-secret-from-env NOT_SET_ANYWHERE: the variable is not set in this environment',
    )
    expect((await run(['connector', 'install', faultConnector({ key: 'plain' }), '--json'])).code).toBe(0)
    const notOauth = await connect('plain', ['--client-id', 'x'])
    expect(notOauth.code).toBe(2)
    expect(JSON.parse(notOauth.stdout).error.message).toBe(
      '--client-id: connector "plain" does not sign in with OAuth (its auth.kind is "none")',
    )

    const wrong = await connect('vault', ['--client-id', BASIC.client_id, '--client-secret-from-env', 'VAULT_SECRET'], {
      VAULT_SECRET: 'not-the-secret',
    })
    expect(wrong.code).toBe(2)
    expect(JSON.parse(wrong.stdout).error).toMatchObject({
      code: 'OAUTH_SIGN_IN_FAILED',
      message: expect.stringMatching(/authorization server refused \(invalid_client\)/),
    })
    expect(
      fs.existsSync(path.join(dir, 'oauth-grants.json')) ? grants().vault?.preRegistered : undefined,
    ).toBeUndefined()
    const s = await stats(basicUrls)
    expect(s.registrations).toBe(0)
    expect(s.grants.authorization_code).toBe(0)
  })

  it(
    'signs in with client_secret_basic; the daemon refreshes with it, a later connect reuses it, disconnect ' +
      'revokes with it and forgets it',
    async () => {
      const before = (await stats(basicUrls)).clientAuth.length
      const res = await connect('vault', ['--client-id', BASIC.client_id, '--client-secret-from-env', 'VAULT_SECRET'], {
        VAULT_SECRET: BASIC.client_secret,
      })
      expect(res.code, res.stdout + res.stderr).toBe(0)
      expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'ready' })
      expect(await whoami('vault')).toEqual([{ type: 'text', text: 'authorized as ada' }])
      expect(fs.statSync(path.join(dir, 'oauth-grants.json')).mode & 0o777).toBe(0o600)
      expect(grants().vault.preRegistered).toEqual({ client_id: BASIC.client_id, client_secret: BASIC.client_secret })

      // the daemon's refresh on a 401 authenticates the same way
      await fetch(`${basicUrls.as}/control`, { method: 'POST', body: JSON.stringify({ expireAccess: true }) })
      expect(await whoami('vault')).toEqual([{ type: 'text', text: 'authorized as ada' }])
      // a later sign-in without the flags uses the stored client
      const again = await connect('vault')
      expect(again.code, again.stdout + again.stderr).toBe(0)
      const s = await stats(basicUrls)
      expect(s.grants).toEqual({ authorization_code: 2, refresh_token: 1 })
      expect(s.registrations).toBe(0)
      expect(s.clientAuth.slice(before)).toEqual(
        Array(3).fill({ endpoint: 'token', method: 'client_secret_basic', clientId: BASIC.client_id }),
      )

      const held = s.issued.slice(-2)
      const off = await run(['connector', 'disconnect', 'vault', '--json'])
      expect(off.code, off.stdout).toBe(0)
      expect(JSON.parse(off.stdout)).toMatchObject({ disconnected: true, revocation: { revoked: true } })
      const revoked = await stats(basicUrls)
      expect(revoked.revoked).toEqual(expect.arrayContaining(held))
      expect(revoked.clientAuth.slice(before + 3)).toEqual(
        Array(2).fill({ endpoint: 'revoke', method: 'client_secret_basic', clientId: BASIC.client_id }),
      )
      expect(grants().vault).toEqual({ serverUrl: basicUrls.mcp })
    },
  )

  it(
    'uses client_secret_post when that is all the authorization server offers, ' + "with the manifest's clientId",
    async () => {
      expect(
        (
          await run([
            'connector',
            'install',
            oauthConnector('vaultpost', postUrls.mcp, { kind: 'oauth', clientId: POST.client_id }),
            '--json',
          ])
        ).code,
      ).toBe(0)
      const res = await connect('vaultpost', ['--client-secret-from-env', 'POST_SECRET'], {
        POST_SECRET: POST.client_secret,
      })
      expect(res.code, res.stdout + res.stderr).toBe(0)
      expect(await whoami('vaultpost')).toEqual([{ type: 'text', text: 'authorized as ada' }])
      expect((await stats(postUrls)).clientAuth).toEqual([
        { endpoint: 'token', method: 'client_secret_post', clientId: POST.client_id },
      ])
    },
  )

  it('no client secret or token value is in any other state file, the daemon log or any CLI output', async () => {
    const secrets = [
      BASIC.client_secret,
      POST.client_secret,
      ...(await stats(basicUrls)).issued,
      ...(await stats(postUrls)).issued,
    ]
    const texts: Array<[string, string]> = outputs.map((o, i) => [`cli output ${i}`, o])
    stateFiles(dir, texts)
    expect(texts.some(([where]) => where.endsWith('daemon.log'))).toBe(true)
    const leaks = texts.flatMap(([where, text]) =>
      secrets.filter((t) => text.includes(t)).map((t) => `${where}: ${t.slice(0, 6)}…`),
    )
    expect(leaks).toEqual([])
  })
})
