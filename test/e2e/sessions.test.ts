import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { modernClient, modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, isAlive, readDaemonJson, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const CREDENTIAL = 'cred-value-9f8e7d6c5b4a'

describe('session tokens', () => {
  let dir: string
  const tokens: string[] = []
  /** `session prepare` through the CLI, for the tests of what it returns and revokes. */
  const prepare = async (session: string, workspace = 'ws') => {
    const p = await tuttiJson(dir, [
      'session',
      'prepare',
      '--provider',
      'tutti-agent',
      '--workspace',
      workspace,
      '--session',
      session,
    ])
    tokens.push(p.env.TUTTI_CONNECTOR_TOKEN)
    return p
  }
  /** The same, in-process, for the tests whose subject is something else. */
  const session = async (name: string) => {
    const p = await prepared(dir, { provider: 'tutti-agent', session: name })
    tokens.push(p.env.TUTTI_CONNECTOR_TOKEN!)
    return p
  }
  const works = async (binding: Binding) => (await modernPost(binding, 'tools/list')).status === 200

  beforeAll(async () => {
    dir = tempStateDir('sessions')
    await installed(dir, faultConnector({ key: 'fx', auth: ['FX_KEY'] }))
    await connected(dir, 'fx', { env: { FX_KEY: CREDENTIAL } })
  })
  /** None of these, nor the credential, in daemon.log, `connector available` (both forms) or `daemon status`. */
  const expectNoSecretsShown = async (secrets: string[]): Promise<void> => {
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    const available =
      (await tutti(dir, ['connector', 'available', '--json'])).stdout +
      (await tutti(dir, ['connector', 'available'])).stdout
    const status = (await tutti(dir, ['daemon', 'status', '--json'])).stdout
    for (const secret of [...secrets, CREDENTIAL]) {
      expect(log).not.toContain(secret)
      expect(available).not.toContain(secret)
      expect(status).not.toContain(secret)
    }
    expect(log).not.toMatch(/Bearer [A-Za-z0-9]/)
  }
  afterAll(async () => {
    // and none of the tokens any test of this file was given, whatever ran
    try {
      await expectNoSecretsShown(tokens)
    } finally {
      await cleanupState(dir)
    }
  })

  it('prepare returns the connector server, the token in env and header, and stores only a hash', async () => {
    const p = await prepare('s1')
    const token = p.env.TUTTI_CONNECTOR_TOKEN
    expect(token).toMatch(/^tutti_[A-Za-z0-9_-]{43}$/)
    expect(p.mcpServers).toEqual([
      {
        name: 'connector',
        type: 'http',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/connector$/),
        headers: { Authorization: `Bearer ${token}` },
      },
    ])
    expect(p.mcpServers[0].url).not.toContain(token)
    expect(p.env.PATH.split(path.delimiter)[0]).toBe(path.join(dir, 'bin'))
    const stored = fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')
    expect(stored).not.toContain(token)
    expect(fs.statSync(path.join(dir, 'sessions.json')).mode & 0o777).toBe(0o600)
    expect(await works(p.mcpServers[0])).toBe(true)
  })

  it('re-issuing for the same session revokes the old token at once; other sessions are untouched', async () => {
    const first = await prepare('s2')
    const other = await prepare('s2', 'another-workspace')
    const second = await prepare('s2')
    expect(second.env.TUTTI_CONNECTOR_TOKEN).not.toBe(first.env.TUTTI_CONNECTOR_TOKEN)
    expect(await works(first.mcpServers[0])).toBe(false)
    expect(await works(second.mcpServers[0])).toBe(true)
    expect(await works(other.mcpServers[0])).toBe(true)
  })

  it('revoke --session ends that session, and its open listen stream', async () => {
    const p = await session('s3')
    const client = await modernClient(p.mcpServers[0]!)
    const sub = await client.listen({ toolsListChanged: true })
    const closed = sub.closed
    expect(await tuttiJson(dir, ['session', 'revoke', '--session', 's3'])).toEqual({ revoked: 1 })
    expect(await works(p.mcpServers[0]!)).toBe(false)
    // the stream closing is the event; the test's timeout bounds the wait
    await expect(closed).resolves.toBeDefined()
    await client.close().catch(() => {})
  })

  it('revoke needs --session or --all', async () => {
    const res = await tutti(dir, ['session', 'revoke', '--json'])
    expect(res.code).toBe(2)
  })

  it('sessions survive a daemon crash and restart, on the same port', async () => {
    const p = await session('s4')
    const before = readDaemonJson(dir)!
    process.kill(before.pid, 'SIGKILL')
    expect(await until(() => !isAlive(before.pid))).toBe(true)
    await tuttiJson(dir, ['daemon', 'start'])
    const after = readDaemonJson(dir)!
    expect(after.pid).not.toBe(before.pid)
    expect(after.port).toBe(before.port)
    const client = await modernClient(p.mcpServers[0]!)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('fx_echo')
    await client.close()
  })

  it(
    '`daemon stop` ends open listen streams gracefully and keeps every token: after a start the same token ' +
      'lists the tools',
    async () => {
      const p = await session('s5')
      const client = await modernClient(p.mcpServers[0]!)
      const sub = await client.listen({ toolsListChanged: true })
      const stored = fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')
      await tuttiJson(dir, ['daemon', 'stop'])
      await expect(sub.closed).resolves.toBe('graceful')
      await client.close().catch(() => {})
      expect(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).toBe(stored)
      await tuttiJson(dir, ['daemon', 'start'])
      const again = await modernClient(p.mcpServers[0]!)
      expect((await again.listTools()).tools.map((t) => t.name)).toContain('fx_echo')
      await again.close()
    },
  )

  it('`daemon stop --revoke-sessions` revokes every token', async () => {
    const p = await session('s5b')
    expect(await works(p.mcpServers[0]!)).toBe(true)
    await tuttiJson(dir, ['daemon', 'stop', '--revoke-sessions'])
    await tuttiJson(dir, ['daemon', 'start'])
    expect(await works(p.mcpServers[0]!)).toBe(false)
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).sessions).toEqual({})
  })

  it('revoke --all', async () => {
    const a = await session('s6')
    const b = await session('s7')
    // every live session, this test's two and whatever the others left
    const live = Object.keys(JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).sessions).length
    expect(live).toBeGreaterThanOrEqual(2)
    expect((await tuttiJson(dir, ['session', 'revoke', '--all'])).revoked).toBe(live)
    expect(await works(a.mcpServers[0]!)).toBe(false)
    expect(await works(b.mcpServers[0]!)).toBe(false)
  })

  it('no token, credential or Authorization value ever reached daemon.log, available or status', async () => {
    // tokens of its own, through the paths that log: used, replaced, used after revoke, streamed, revoked
    const mine = [await session('t1'), await session('t2'), await session('t3')]
    for (const p of mine) expect(await works(p.mcpServers[0]!)).toBe(true)
    const replaced = await session('t1')
    expect(await works(mine[0]!.mcpServers[0]!)).toBe(false)
    const client = await modernClient(replaced.mcpServers[0]!)
    const sub = await client.listen({ toolsListChanged: true })
    await tuttiJson(dir, ['session', 'revoke', '--session', 't1'])
    await sub.closed
    await client.close().catch(() => {})
    expect(await works(replaced.mcpServers[0]!)).toBe(false)
    await expectNoSecretsShown([...mine, replaced].map((p) => p.env.TUTTI_CONNECTOR_TOKEN))
  })
})
