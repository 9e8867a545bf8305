import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Bystander } from '../support/bystander.js'
import { prepared } from '../support/in-process.js'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { FOLLOW_BROWSER, plainRemoteConnector, startOAuthFixture, stateFiles } from '../support/oauth-fixture.js'
import type { OAuthFixture } from '../support/oauth-fixture.js'
import { cleanupState, connectorState, tempStateDir, tutti, type RunResult } from '../support/tutti.js'

/**
 * OAuth found on the fly (issue 21, item 4): a remote entry whose manifest
 * says nothing of auth, at a server that answers 401 and offers OAuth
 * (RFC 9728), is needs-auth with the hint; `connect` signs in as for
 * `auth.kind: "oauth"`, calls work, and the grant is refreshed and revoked
 * like any other. A 401 with no OAuth metadata is a clear failure. One
 * daemon for the file; each test has its own connector and fixture.
 */
describe('OAuth found on a 401', () => {
  let dir: string
  let binding: Binding
  let bystander: Bystander
  let challenged: OAuthFixture
  let discovered: OAuthFixture
  let bare: OAuthFixture
  const browserLog = path.join(os.tmpdir(), `tutti-oauth-discovery-${process.pid}.log`)
  /** Every CLI output of this file: the last test looks for token values in it. */
  const outputs: string[] = []
  const run = async (args: string[]): Promise<RunResult> => {
    const res = await tutti(dir, args, { env: { FOLLOW_BROWSER_LOG: browserLog } })
    outputs.push(res.stdout, res.stderr)
    return res
  }
  const connect = (key: string) => run(['connector', 'connect', key, '--browser', FOLLOW_BROWSER, '--json'])
  const mcpOf = async (key: string) => {
    const res = await run(['connector', 'available', '--json'])
    const connector = JSON.parse(res.stdout).connectors.find((c: { key: string }) => c.key === key)
    return connector?.interfaces.find((i: { kind: string }) => i.kind === 'mcp')
  }
  const prepare = async (session: string): Promise<Binding> => (await prepared(dir, { session })).mcpServers[0]!
  const hint = (key: string) => `sign-in required: run tutti connector connect ${key}`
  const toolNames = async (): Promise<string[]> => {
    const client = await modernClient(binding)
    try {
      return (await client.listTools()).tools.map((t) => t.name)
    } finally {
      await client.close()
    }
  }
  const call = async (name: string) => {
    const client = await modernClient(binding)
    try {
      return await client.callTool({ name, arguments: {} })
    } finally {
      await client.close()
    }
  }

  beforeAll(async () => {
    ;[challenged, discovered, bare] = await Promise.all([
      startOAuthFixture(),
      startOAuthFixture({ FIXTURE_OAUTH_BARE_CHALLENGE: '1' }),
      startOAuthFixture({ FIXTURE_OAUTH_NO_METADATA: '1' }),
    ])
    dir = tempStateDir('oauth-discovery')
    bystander = await Bystander.start(dir)
    binding = await prepare('found')
  })
  afterAll(async () => {
    for (const f of [challenged, discovered, bare]) f?.child.kill()
    fs.rmSync(browserLog, { force: true })
    await cleanupState(dir)
  })

  it('a 401 whose challenge names resource metadata: install ends needs-auth with the hint', async () => {
    const install = run(['connector', 'install', plainRemoteConnector('linear', challenged.urls.mcp), '--json'])
    const { result: installed, watched } = await bystander.during(install)
    expect(installed.code, installed.stdout + installed.stderr).toBe(0)
    expect(JSON.parse(installed.stdout).state).toMatchObject({ status: 'needs-auth', reason: hint('linear'), tools: 0 })
    expect(watched.missingTools).toBe(0)
    expect(await mcpOf('linear')).toMatchObject({ status: 'needs-auth', reason: hint('linear') })
    const state = await connectorState(dir, 'linear')
    expect(state).toMatchObject({ status: 'needs-auth', reason: hint('linear'), upstream: 'none' })
    expect((await run(['daemon', 'status'])).stdout).toContain(`linear 1.0.0: needs-auth, generation`)
    expect((await run(['connector', 'available'])).stdout).toContain(`needs-auth: ${hint('linear')}`)
    expect((await toolNames()).filter((n) => n.startsWith('linear_'))).toEqual([])
    // asked once, not retried in a loop: only `connect` helps
    expect((await challenged.stats()).registrations).toBe(0)
  })

  it('connect signs in as for auth.kind "oauth"; calls reach the server with the token', async () => {
    const res = await connect('linear')
    expect(res.code, res.stdout + res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'ready', tools: 2 })
    const opened = new RegExp(`Open this URL to sign in to linear:\\n {2}${challenged.urls.as}/authorize\\?`)
    expect(res.stderr).toMatch(opened)
    const s = await challenged.stats()
    expect(s.grants.authorization_code).toBe(1)
    expect(s.lastAuthorize).toMatchObject({ code_challenge_method: 'S256', resource: challenged.urls.mcp })
    expect(await toolNames()).toEqual(expect.arrayContaining(['linear_whoami', 'linear_write']))
    expect((await call('linear_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
    expect((await challenged.stats()).seenByMcp.at(-1)).toBe(s.issued[0])
    expect(await mcpOf('linear')).toMatchObject({ status: 'ready' })
  })

  it('the grant is refreshed on a 401 like any other', async () => {
    const before = await challenged.stats()
    await challenged.control({ expireAccess: true })
    expect((await call('linear_whoami')).isError).toBeFalsy()
    const after = await challenged.stats()
    expect(after.grants.refresh_token).toBe(before.grants.refresh_token + 1)
    expect(after.seenByMcp.at(-1)).toBe(after.issued.at(-2))
  })

  it('disconnect revokes the tokens; the connector is needs-auth with the hint again', async () => {
    const held = (await challenged.stats()).issued.slice(-2)
    const res = await run(['connector', 'disconnect', 'linear', '--json'])
    expect(res.code, res.stdout).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ disconnected: true, revocation: { revoked: true } })
    expect((await challenged.stats()).revoked).toEqual(expect.arrayContaining(held))
    expect(await mcpOf('linear')).toMatchObject({ status: 'needs-auth', reason: hint('linear') })
    await expect(call('linear_whoami')).rejects.toThrow(/unknown tool|no longer available/)
  })

  it('a bare 401 challenge with protected-resource metadata at the well-known URL is found by discovery', async () => {
    const installed = await run(['connector', 'install', plainRemoteConnector('notion', discovered.urls.mcp), '--json'])
    expect(installed.code, installed.stdout + installed.stderr).toBe(0)
    expect(JSON.parse(installed.stdout).state).toMatchObject({ status: 'needs-auth', reason: hint('notion') })
    const res = await connect('notion')
    expect(res.code, res.stdout + res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).state).toMatchObject({ status: 'ready', tools: 2 })
    expect((await call('notion_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
  })

  it('a 401 with no OAuth metadata fails, saying the server wants credentials and how to send them', async () => {
    const installed = await run(['connector', 'install', plainRemoteConnector('locked', bare.urls.mcp), '--json'])
    expect(installed.code).toBe(1)
    const message = JSON.parse(installed.stdout).error.message
    expect(message).toMatch(/^installed locked 1\.0\.0, but its MCP server failed: could not connect: /)
    expect(message).toContain('the server requires credentials (HTTP 401) and offers no OAuth sign-in')
    expect(message).toContain('--header "Authorization: Bearer …"')
    const reason = expect.stringContaining('requires credentials (HTTP 401)')
    expect(await connectorState(dir, 'locked')).toMatchObject({ status: 'failed', reason })
    // connect does not start a sign-in for it: the reconcile reports the same
    const res = await connect('locked')
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout).error.message).toMatch(/requires credentials \(HTTP 401\)/)
    expect((await bare.stats()).registrations).toBe(0)
  })

  it('no token value is in any other state file, the daemon log, the browser command or any CLI output', async () => {
    const tokens: string[] = [...(await challenged.stats()).issued, ...(await discovered.stats()).issued]
    expect(tokens.length).toBeGreaterThanOrEqual(6)
    const texts: Array<[string, string]> = outputs.map((o, i) => [`cli output ${i}`, o])
    texts.push(['browser argv', fs.readFileSync(browserLog, 'utf8')])
    stateFiles(dir, texts)
    const leaksIn = ([where, text]: [string, string]) =>
      tokens.filter((t) => text.includes(t)).map((t) => `${where}: ${t.slice(0, 6)}…`)
    const leaks = texts.flatMap(leaksIn)
    expect(leaks).toEqual([])
    await bystander.expectServing()
  })

  it('a new daemon finds the sign-in in the grant store: ready at once, with no manifest saying "oauth"', async () => {
    await run(['daemon', 'stop'])
    // the stop ended the sessions: a new one
    binding = await prepare('again')
    expect(await mcpOf('notion')).toMatchObject({ status: 'ready' })
    expect((await call('notion_whoami')).content).toEqual([{ type: 'text', text: 'authorized as ada' }])
    expect(await mcpOf('linear')).toMatchObject({ status: 'needs-auth', reason: hint('linear') })
  })
})
