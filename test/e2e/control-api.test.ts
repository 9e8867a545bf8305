import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawRequest } from '../support/mcp-clients.js'
import { cleanupState, readDaemonJson, tempStateDir, tuttiJson } from '../support/tutti.js'

// The CLI ↔ daemon control API refuses bad input with a clear error and stays up.
describe('control API bad input', () => {
  let dir: string
  let base: string
  let auth: Record<string, string>
  beforeAll(async () => {
    dir = tempStateDir('control')
    await tuttiJson(dir, ['daemon', 'start'])
    const info = readDaemonJson(dir)!
    base = `http://127.0.0.1:${info.port}/control`
    auth = { authorization: `Bearer ${info.controlToken}`, 'content-type': 'application/json' }
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it.each([
    ['no control token', 'status', {}, '{}', 401, 'UNAUTHORIZED'],
    ['a wrong control token', 'status', { authorization: 'Bearer nope' }, '{}', 401, 'UNAUTHORIZED'],
    ['an unknown message', 'invoke', null, '{}', 404, 'UNKNOWN_MESSAGE'],
    ['a body that is not JSON', 'reconcile', null, '{"keys": [', 400, 'ARGUMENT_INVALID'],
    ['a request of the wrong shape', 'reconcile', null, '{"keys": 5}', 400, 'ARGUMENT_INVALID'],
    ['an unknown field', 'status', null, '{"extra": true}', 400, 'ARGUMENT_INVALID'],
    [
      'a bad session id',
      'session-prepare',
      null,
      '{"provider":"codex","workspace":"w","session":""}',
      400,
      'ARGUMENT_INVALID',
    ],
  ])('%s → %i %s', async (_label, message, headers, body, status, code) => {
    const res = await rawRequest(`${base}/${message}`, {
      headers: headers ? { 'content-type': 'application/json', ...headers } : auth,
      body,
    })
    expect(res.status).toBe(status)
    expect(res.json.error.code).toBe(code)
  })

  it('an oversized body → 413, and the daemon still answers', async () => {
    const res = await rawRequest(`${base}/status`, { headers: auth, body: Buffer.alloc(2 * 1024 * 1024, 0x20) })
    expect(res.status).toBe(413)
    expect((await rawRequest(`${base}/health`, { headers: auth, body: '{}' })).json.pid).toBe(readDaemonJson(dir)!.pid)
  })
})
