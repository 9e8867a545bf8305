import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { execFile, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { installed, prepared } from '../support/in-process.js'
import type { Binding } from '../support/mcp-clients.js'
import { FOLLOW_BROWSER, oauthConnector, type OAuthFixture, startOAuthFixture } from '../support/oauth-fixture.js'
import { cleanupState, connectorState, tempStateDir, tutti } from '../support/tutti.js'

/*
 * tutti's own URL-mode elicitation (issue 24 item 4): a call to an OAuth connector whose grant only the user can
 * restore asks the caller to open the authorization URL, inside the agent, and goes on once signed in. The
 * authorization server is the OAuth fixture; the "user" is follow-browser.mjs, which follows the URL to tutti's
 * loopback redirect as a browser would.
 */
const MODERN = '2026-07-28'
const LEGACY = '2025-06-18'
type Era = 'modern' | 'legacy'
type Answer = 'open' | 'decline'

describe('a call that needs a new sign-in asks its caller to sign in (URL-mode elicitation)', () => {
  let dir: string
  let oauth: OAuthFixture
  let binding: Binding
  const asked: Array<Record<string, unknown>> = []
  const clients: Client[] = []

  beforeAll(async () => {
    oauth = await startOAuthFixture()
    dir = tempStateDir('sign-in-elicitation')
    await installed(dir, oauthConnector('remote', oauth.urls.mcp))
    const res = await tutti(dir, ['connector', 'connect', 'remote', '--browser', FOLLOW_BROWSER, '--json'])
    expect(res.code, res.stderr).toBe(0)
    binding = (await prepared(dir, { session: 'sign-in' })).mcpServers[0]!
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    ;(oauth?.child as ChildProcess | undefined)?.kill()
    await cleanupState(dir)
  })

  /** `beforeOpen`: what the user does before opening the link (makes another call, say). */
  async function client(
    era: Era,
    capabilities: Record<string, unknown>,
    answer: Answer = 'open',
    beforeOpen?: () => Promise<void>,
  ): Promise<Client> {
    const c = new Client(
      { name: `sign-in-${era}`, version: '1' },
      era === 'modern'
        ? { capabilities, versionNegotiation: { mode: { pin: MODERN } } }
        : { capabilities, supportedProtocolVersions: [LEGACY] },
    )
    clients.push(c)
    if ('elicitation' in capabilities)
      c.setRequestHandler('elicitation/create', async (req) => {
        asked.push(req.params as Record<string, unknown>)
        if (answer === 'decline' || req.params.mode !== 'url') return { action: 'decline' }
        await beforeOpen?.()
        // the user opens the link: the browser follows it to tutti's loopback redirect
        await promisify(execFile)(process.execPath, [FOLLOW_BROWSER, req.params.url])
        return { action: 'accept' }
      })
    await c.connect(
      new StreamableHTTPClientTransport(new URL(binding.url), { requestInit: { headers: binding.headers } }),
    )
    return c
  }

  /** The stored grant stops working: its access token expires and the server refuses to refresh it. */
  async function grantLost(): Promise<void> {
    await oauth.control({ failRefresh: true, expireAccess: true })
  }

  const text = (r: unknown) => JSON.stringify((r as { content?: unknown }).content)
  const failure = (p: Promise<unknown>) =>
    p.then(
      (r) => text(r),
      (err: Error) => err.message,
    )

  it.each(['modern', 'legacy'] as const)('%s: the caller opens the link, the same call then succeeds', async (era) => {
    expect((await connectorState(dir, 'remote')).status).toBe('ready')
    await grantLost()
    const before = (await oauth.stats()).grants.authorization_code
    const c = await client(era, { elicitation: { url: {} } })
    asked.length = 0
    const result = await c.callTool({ name: 'remote_whoami', arguments: {} })
    expect(text(result)).toBe('[{"type":"text","text":"authorized as ada"}]')
    // one URL-mode elicitation, naming the connector, for the authorization server's own authorize endpoint
    expect(asked).toEqual([
      expect.objectContaining({
        mode: 'url',
        url: expect.stringMatching(new RegExp(`^${oauth.urls.as}/authorize\\?`)),
        message: expect.stringContaining('remote'),
        // the 2025-06-18 shape names the elicitation; 2026-07-28's input request has no id
        ...(era === 'legacy' ? { elicitationId: expect.any(String) } : {}),
      }),
    ])
    const stats = await oauth.stats()
    expect(stats.grants.authorization_code).toBe(before + 1)
    expect((await connectorState(dir, 'remote')).status).toBe('ready')
    // the new tokens are in their store only: never in the daemon's log
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    for (const token of stats.issued as string[]) expect(log).not.toContain(token)
  })

  it('calls that find the grant lost together ask the user once, and all go on after that sign-in', async () => {
    await grantLost()
    asked.length = 0
    const log = path.join(dir, 'daemon.log')
    const waiting = () => fs.readFileSync(log, 'utf8').split('waiting for the sign-in under way').length - 1
    const before = waiting()
    let settled = 0
    const c = await client('legacy', { elicitation: { url: {} } }, 'open', async () => {
      // the other call reaches the sign-in under way and waits for it, or (unfixed) fails without it
      await eventually(
        () => waiting() > before || settled > 0,
        (found) => found,
      )
    })
    // both are in flight before either finds the grant lost: each resolved its tool while the connector was ready
    const calls = [1, 2].map(() =>
      failure(c.callTool({ name: 'remote_whoami', arguments: {} })).finally(() => {
        settled++
      }),
    )
    const authorized = '[{"type":"text","text":"authorized as ada"}]'
    expect(await Promise.all(calls)).toEqual([authorized, authorized])
    expect(asked).toHaveLength(1)
  })

  it('a caller that declared no URL elicitation reads how to sign in, and is asked nothing', async () => {
    await grantLost()
    asked.length = 0
    const c = await client('modern', { elicitation: { form: {} } })
    const failed = await failure(c.callTool({ name: 'remote_whoami', arguments: {} }))
    expect(failed).toMatch(/needs a new sign-in.*tutti connector connect remote/)
    expect(asked).toEqual([])
  })

  it('a caller that declines is told the sign-in was declined; the connector still needs it', async () => {
    // signed in again at the terminal: the connector serves its tools again, until its grant is lost once more
    const res = await tutti(dir, ['connector', 'connect', 'remote', '--browser', FOLLOW_BROWSER, '--json'])
    expect(res.code, res.stderr).toBe(0)
    await grantLost()
    asked.length = 0
    const c = await client('legacy', { elicitation: { url: {} } }, 'decline')
    const failed = await failure(c.callTool({ name: 'remote_whoami', arguments: {} }))
    expect(failed).toMatch(/the sign-in was declined; run `tutti connector connect remote`/)
    expect(asked).toHaveLength(1)
    expect((await connectorState(dir, 'remote')).status).toBe('needs-auth')
  })
})
