import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultConnector } from '../support/fixture-connector.js'
import { legacyPost, MODERN_META, modernPost, rawRequest, type Binding } from '../support/mcp-clients.js'
import { cleanupState, readDaemonJson, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

describe('the guard in front of the connector MCP server', () => {
  let dir: string
  let binding: Binding
  let token: string
  let revokedToken: string
  beforeAll(async () => {
    dir = tempStateDir('guard')
    await tuttiJson(dir, ['connector', 'install', faultConnector({ key: 'fx' })])
    const old = await tuttiJson(dir, ['session', 'prepare', '--provider', 'claude', '--workspace', 'ws', '--session', 'revoked'])
    revokedToken = old.env.TUTTI_CONNECTOR_TOKEN
    await tuttiJson(dir, ['session', 'revoke', '--session', 'revoked'])
    const prepared = await tuttiJson(dir, ['session', 'prepare', '--provider', 'claude', '--workspace', 'ws', '--session', 'guard'])
    binding = prepared.mcpServers[0]
    token = prepared.env.TUTTI_CONNECTOR_TOKEN
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  const auth = () => ({ authorization: `Bearer ${token}` })
  const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } })
  const modernHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }

  it.each([
    ['no token', {}, 401],
    ['a wrong token', { authorization: 'Bearer tutti_not-a-real-token' }, 401],
    ['a token of another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 401],
  ])('%s → 401', async (_label, headers, status) => {
    const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...headers }, body: listBody })
    expect(res.status).toBe(status)
    expect(res.headers['www-authenticate']).toMatch(/Bearer/)
  })

  it('a revoked token → 401', async () => {
    const res = await rawRequest(binding.url, { headers: { ...modernHeaders, authorization: `Bearer ${revokedToken}` }, body: listBody })
    expect(res.status).toBe(401)
  })

  it.each([
    ['foreign Host', { host: 'evil.example.com' }],
    ['Host that only starts like loopback', { host: '127.0.0.1.evil.example.com' }],
    ['foreign Origin', { origin: 'http://evil.example.com' }],
    ['null Origin', { origin: 'null' }],
  ])('%s → 403, before auth', async (_label, headers) => {
    const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...auth(), ...headers }, body: listBody })
    expect(res.status).toBe(403)
  })

  it('loopback Host names and a loopback Origin are accepted', async () => {
    const port = new URL(binding.url).port
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...auth(), host, origin: `http://localhost:${port}` }, body: listBody })
      expect(res.status, host).toBe(200)
    }
  })

  it.each(['GET', 'DELETE', 'PUT'])('%s → 405 with Allow: POST', async (method) => {
    const res = await rawRequest(binding.url, { method, headers: auth() })
    expect(res.status).toBe(405)
    expect(res.headers.allow).toBe('POST')
  })

  it('a JSON-RPC batch → 400 / -32600', async () => {
    const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...auth() }, body: `[${listBody},${listBody}]` })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32600)
  })

  it('bad JSON → 400 / -32700', async () => {
    const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...auth() }, body: '{"jsonrpc": "2.0", "id": 1, ' })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32700)
  })

  it('an oversized body → 413', async () => {
    const res = await rawRequest(binding.url, { headers: { ...modernHeaders, ...auth() }, body: Buffer.alloc(5 * 1024 * 1024, 0x20) })
    expect(res.status).toBe(413)
  })

  it('an unknown tool → -32602 (both eras)', async () => {
    const modern = await modernPost(binding, 'tools/call', { name: 'fx_nope', arguments: {} })
    expect(modern.json.error.code).toBe(-32602)
    expect(modern.json.error.message).toMatch(/unknown tool "fx_nope"/)
    const legacy = await legacyPost(binding, { id: 9, method: 'tools/call', params: { name: 'fx_nope', arguments: {} } }, { ...auth(), 'mcp-protocol-version': '2025-06-18' })
    expect(legacy.json.error.code).toBe(-32602)
  })

  it('a modern request without the _meta envelope → 400 / -32602', async () => {
    const res = await rawRequest(binding.url, {
      headers: { ...modernHeaders, ...auth() },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }),
    })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32602)
  })

  it('a header that disagrees with the body → 400 / -32020', async () => {
    const method = await modernPost(binding, 'tools/list', {}, { 'mcp-method': 'prompts/list' })
    expect(method.status).toBe(400)
    expect(method.json.error.code).toBe(-32020)
    const name = await modernPost(binding, 'tools/call', { name: 'fx_echo', arguments: { message: 'x' } }, { 'mcp-name': 'fx_other' })
    expect(name.status).toBe(400)
    expect(name.json.error.code).toBe(-32020)
  })

  it('Mcp-Param headers from x-mcp-header: checked, base64 decoded, mismatch → 400 / -32020', async () => {
    const call = (headers: Record<string, string>, region = 'us-west1') => modernPost(binding, 'tools/call', { name: 'fx_regional', arguments: { region } }, headers)
    expect((await call({ 'mcp-param-region': 'us-west1' })).json.result.content).toEqual([{ type: 'text', text: 'region us-west1' }])
    expect((await call({ 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` }, 'Zürich')).json.result.content[0].text).toBe('region Zürich')
    for (const [headers, problem] of [
      [{}, 'param-header-missing'],
      [{ 'mcp-param-region': 'eu-north1' }, 'param-header-mismatch'],
      [{ 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }, 'param-header-invalid-encoding'],
    ] as const) {
      const res = await call(headers)
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe(-32020)
      expect(res.json.error.message).toContain(problem)
    }
  })

  it('an unsupported protocol version → 400 / -32022', async () => {
    const res = await rawRequest(binding.url, {
      headers: { ...modernHeaders, ...auth(), 'mcp-protocol-version': '2099-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }),
    })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe(-32022)
  })

  it('resources/read of an unknown URI → -32602 naming the URI (both eras)', async () => {
    const modern = await modernPost(binding, 'resources/read', { uri: 'file:///nope' }, { 'mcp-name': 'file:///nope' })
    expect(modern.json.error).toMatchObject({ code: -32602, data: { uri: 'file:///nope' } })
    const legacy = await legacyPost(binding, { id: 4, method: 'resources/read', params: { uri: 'file:///nope' } }, { ...auth(), 'mcp-protocol-version': '2025-06-18' })
    expect(legacy.json.error).toMatchObject({ code: -32602, data: { uri: 'file:///nope' } })
  })

  it('initialize or ping with a modern envelope → 404 / -32601', async () => {
    for (const method of ['initialize', 'ping', 'unknown/method']) {
      const res = await modernPost(binding, method)
      expect(res.status, method).toBe(404)
      expect(res.json.error.code).toBe(-32601)
    }
  })

  it('after all of that the daemon is up, answers, and logged no secret', async () => {
    const status = await tuttiJson(dir, ['daemon', 'status'])
    expect(status.running).toBe(true)
    expect(status.pid).toBe(readDaemonJson(dir)!.pid)
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
    const control = await rawRequest(`http://127.0.0.1:${info.port}/control/status`, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })
    expect(control.status).toBe(401)
    const mcp = await rawRequest(binding.url, { headers: { ...modernHeaders, authorization: `Bearer ${info.controlToken}` }, body: listBody })
    expect(mcp.status).toBe(401)
    const bad = await tutti(dir, ['session', 'prepare', '--provider', 'nope', '--workspace', 'w', '--session', 's', '--json'])
    expect(bad.code).toBe(2)
  })
})
