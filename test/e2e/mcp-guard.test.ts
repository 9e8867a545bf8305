import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultConnector } from '../support/fixture-connector.js'
import { MODERN_META, modernPost, rawRequest, type Binding } from '../support/mcp-clients.js'
import { cleanupState, readDaemonJson, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

// The guard in front of the connector MCP server, against the real daemon:
// what only a real daemon can show (tokens issued and revoked through the
// CLI, Host headers on a real socket, a real upstream's x-mcp-header, the
// log on disk). Every other refusal is checked in-process, on the same code:
// test/runtime/mcp-endpoint-guard.test.ts.
describe('the guard in front of the connector MCP server', () => {
  let dir: string
  let binding: Binding
  let token: string
  let revokedToken: string
  beforeAll(async () => {
    dir = tempStateDir('guard')
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx' })])
    // preparing the same session again revokes its first token (`session revoke` itself: sessions.test.ts)
    const old = await tuttiJson(dir, [
      'session',
      'prepare',
      '--provider',
      'claude',
      '--workspace',
      'ws',
      '--session',
      'guard',
    ])
    revokedToken = old.env.TUTTI_CONNECTOR_TOKEN
    const prepared = await tuttiJson(dir, [
      'session',
      'prepare',
      '--provider',
      'claude',
      '--workspace',
      'ws',
      '--session',
      'guard',
    ])
    binding = prepared.mcpServers[0]
    token = prepared.env.TUTTI_CONNECTOR_TOKEN
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  const auth = () => ({ authorization: `Bearer ${token}` })
  const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } })
  const modernHeaders = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/list',
  }

  it('no token, or a token the CLI revoked → 401 with a Bearer challenge', async () => {
    for (const headers of [{}, { authorization: `Bearer ${revokedToken}` }] as Record<string, string>[]) {
      const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...headers }, body: listBody })
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/Bearer/)
    }
  })

  it('a foreign Host → 403 before auth; loopback Host names and a loopback Origin are accepted', async () => {
    expect(
      (
        await rawRequest(binding.url, {
          headers: { ...modernHeaders, ...auth(), host: 'evil.example.com' },
          body: listBody,
        })
      ).status,
    ).toBe(403)
    const port = new URL(binding.url).port
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const res = await rawRequest(binding.url, {
        headers: { ...modernHeaders, ...auth(), host, origin: `http://localhost:${port}` },
        body: listBody,
      })
      expect(res.status, host).toBe(200)
    }
  })

  it("Mcp-Param headers from a real upstream's x-mcp-header: base64 decoded, a mismatch → 400 / -32020", async () => {
    const call = (headers: Record<string, string>, region: string) =>
      modernPost(binding, 'tools/call', { name: 'fx_regional', arguments: { region } }, headers)
    expect(
      (await call({ 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` }, 'Zürich')).json
        .result.content,
    ).toEqual([{ type: 'text', text: 'region Zürich' }])
    const res = await call({ 'mcp-param-region': 'eu-north1' }, 'us-west1')
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32020)
    expect(res.json.error.message).toContain('param-header-mismatch')
  })

  it('after all of that the daemon is up, answers, and logged no secret', async () => {
    const info = readDaemonJson(dir)!
    const health = await rawRequest(`http://127.0.0.1:${info.port}/control/health`, {
      headers: { authorization: `Bearer ${info.controlToken}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(health.json.pid).toBe(info.pid)
    const ok = await modernPost(binding, 'tools/call', { name: 'fx_echo', arguments: { message: 'still here' } })
    expect(ok.json.result.content).toEqual([{ type: 'text', text: 'still here' }])
    const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
    expect(log).not.toContain(token)
    expect(log).not.toContain(revokedToken)
    expect(log).not.toMatch(/Bearer tutti_/)
    expect(log).not.toMatch(/"level":"error".*status 500/)
  })

  it('the control API rejects a session token and the MCP path rejects the control token', async () => {
    const info = readDaemonJson(dir)!
    const control = await rawRequest(`http://127.0.0.1:${info.port}/control/status`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(control.status).toBe(401)
    const mcp = await rawRequest(binding.url, {
      headers: { ...modernHeaders, authorization: `Bearer ${info.controlToken}` },
      body: listBody,
    })
    expect(mcp.status).toBe(401)
    const bad = await tutti(dir, [
      'session',
      'prepare',
      '--provider',
      'nope',
      '--workspace',
      'w',
      '--session',
      's',
      '--json',
    ])
    expect(bad.code).toBe(2)
  })
})
