import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { FAULT_TOOLS, faultConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, connectorState, REPO, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

const HTTP_TOKEN = 'remote-secret-5e6f7a8b9c0d'

function httpConnector(key: string, urlPath = '/mcp'): (port: number) => string {
  return (port) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-http-${key}-`))
    fs.writeFileSync(
      path.join(dir, 'tutti-connector.json'),
      JSON.stringify({
        schemaVersion: 1,
        key,
        name: `Remote ${key}`,
        version: '1.0.0',
        auth: { kind: 'env', variables: [{ name: 'REMOTE_TOKEN', secret: true }] },
        mcp: {
          transport: 'http',
          url: `http://127.0.0.1:${port}${urlPath}`,
          headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' },
        },
      }),
    )
    return dir
  }
}

describe('upstream kinds: remote Streamable HTTP, paginated and changing stdio', () => {
  let dir: string
  let binding: Binding
  let server: ChildProcess
  let port: number
  beforeAll(async () => {
    server = spawn(process.execPath, [path.join(REPO, 'test/fixtures/http-server.mjs')], {
      env: { ...process.env, FIXTURE_HTTP_TOKEN: HTTP_TOKEN, FIXTURE_HTTP_USER: 'ada' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    port = await new Promise<number>((resolve) =>
      server.stdout!.on('data', (d: Buffer) => resolve(Number(/listening (\d+)/.exec(d.toString())![1]))),
    )
    dir = tempStateDir('kinds')
    binding = (await prepared(dir, { session: 'kinds' })).mcpServers[0]!
  })
  afterAll(async () => {
    server?.kill()
    await cleanupState(dir)
  })

  it('a remote HTTP connector gets its headers from credentials and serves both eras', async () => {
    await installed(dir, httpConnector('remote')(port))
    const res = await connected(dir, 'remote', { env: { REMOTE_TOKEN: HTTP_TOKEN } })
    expect(res.state).toMatchObject({ status: 'ready', tools: 2 })
    for (const make of [modernClient, legacyClient]) {
      const client = await make(binding)
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['remote_whoami', 'remote_count']),
      )
      expect((await client.callTool({ name: 'remote_whoami', arguments: {} })).content).toEqual([
        { type: 'text', text: 'authorized as ada' },
      ])
      await client.close()
    }
    // the credential went into the upstream's headers, never into the log
    expect(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')).not.toContain(HTTP_TOKEN)
  })

  it('a wrong credential fails closed with a message that carries no secret', async () => {
    await installed(dir, httpConnector('wrong')(port))
    const res = await tutti(dir, [
      'connector',
      'connect',
      'wrong',
      '--env',
      'REMOTE_TOKEN=not-the-token-1234',
      '--json',
    ])
    // the credential is stored, but the connector is not ready: exit 1 with the reason
    expect(res.code).toBe(1)
    const error = JSON.parse(res.stdout).error
    expect(error).toMatchObject({ code: 'CONNECTOR_NOT_READY' })
    expect(error.message).toMatch(/connected wrong, but its MCP server failed: could not connect.*401/)
    expect(res.stdout + res.stderr).not.toContain('not-the-token-1234')
    const status = await tuttiJson(dir, ['daemon', 'status'])
    expect(status.connectors.find((c: { key: string }) => c.key === 'wrong')).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/401/),
    })
    expect(JSON.stringify(status)).not.toContain('not-the-token-1234')
    expect(fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')).not.toContain('not-the-token-1234')
  })

  it('a redirect to another host is not followed', async () => {
    await installed(dir, httpConnector('redir', '/redirect')(port))
    const res = await tutti(dir, ['connector', 'connect', 'redir', '--env', `REMOTE_TOKEN=${HTTP_TOKEN}`, '--json'])
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout).error.message).toMatch(/Redirect to http:\/\/127\.0\.0\.2:9\/mcp not followed/)
  })

  it('paginated upstream tools/list is followed to the end', async () => {
    const src = faultConnector({ key: 'paged' })
    const manifest = JSON.parse(fs.readFileSync(path.join(src, 'tutti-connector.json'), 'utf8'))
    manifest.mcp.env = { ...manifest.mcp.env, FIXTURE_PAGE_SIZE: '3', FIXTURE_EXTRA_TOOLS: '20' }
    fs.writeFileSync(path.join(src, 'tutti-connector.json'), JSON.stringify(manifest))
    const res = await installed(dir, src)
    expect(res.state).toMatchObject({ status: 'ready', tools: FAULT_TOOLS.length + 20 })
    const client = await modernClient(binding)
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('paged_'))
    expect(names).toHaveLength(FAULT_TOOLS.length + 20)
    expect(names).toContain('paged_extra-19')
    await client.close()
  })

  it('an upstream tools/list_changed rebuilds the route as a new generation and tells listeners once', async () => {
    const client = await modernClient(binding)
    const changes: unknown[] = []
    client.setNotificationHandler('notifications/tools/list_changed', (n) => void changes.push(n))
    // listening before the install, and waiting for its notice: a stream opened just after a commit may still get it
    const sub = await client.listen({ toolsListChanged: true })
    await installed(dir, faultConnector({ key: 'grower' }))
    expect(await until(() => changes.length >= 1)).toBe(true)
    // "tells listeners once": that no second notice follows can only be shown by a quiet period (notices carry
    // nothing that tells them apart, so another connector's change cannot serve as a barrier); one before the
    // count starts too, for a notice of the previous test's commit that the stream opened in time to get
    const quiet = () => new Promise((r) => setTimeout(r, 300))
    await quiet()
    const counted = changes.length
    const before = await connectorState(dir, 'grower')
    await client.callTool({ name: 'grower_grow', arguments: {} })
    expect(await until(() => changes.length >= counted + 1)).toBe(true)
    await quiet()
    expect(changes).toHaveLength(counted + 1)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(`grower_grown-${FAULT_TOOLS.length}`)
    const after = await connectorState(dir, 'grower')
    expect(after.generation).toBe(before.generation + 1)
    expect(after.tools).toBe(before.tools + 1)
    await sub.close()
    await client.close()
  })
})
