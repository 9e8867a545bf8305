import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CAP_BYTES, legacy, modern, startEndpoint, type Harness } from './mcp-endpoint-harness.js'

// The endpoint's side of a cut result: resources/read of its link, by the
// session that made the call only, in both eras; a revoked session's
// results are dropped.
let h: Harness
beforeAll(async () => {
  h = await startEndpoint({ caps: true })
})
afterAll(async () => {
  await h.close()
})

const read = (token: string, uri: string) =>
  modern({ ...h, token }, 'resources/read', { uri }, { 'mcp-method': 'resources/read', 'mcp-name': uri })

describe('resources/read of a cut result', () => {
  it('the calling session reads it in both eras; another session’s read is not found', async () => {
    const token = await h.sessions.issue('ws', 'reader', 'codex')
    const call = await modern({ ...h, token }, 'tools/call', { name: 'cx_accents', arguments: { repeat: 2000 } })
    const uri = call.json.result.content.at(-1).uri as string
    const first = await read(token, uri)
    expect(first.json.result.contents[0]).toMatchObject({ uri, mimeType: 'text/plain' })
    expect(first.json.result.contents.at(-1).text).toMatch(new RegExp(`^\\[tutti\\] Piece 1 of \\d+ of ${uri}`))
    const viaLegacy = await legacy({ ...h, token }, { id: 3, method: 'resources/read', params: { uri } })
    expect(viaLegacy.json.result.contents).toEqual(first.json.result.contents)
    expect(Buffer.byteLength(JSON.stringify(first.json.result.contents))).toBeLessThanOrEqual(CAP_BYTES)

    const other = await read(h.token, uri)
    expect(other.json.error).toEqual({ code: -32602, message: `resource not found: ${uri}`, data: { uri } })
  })

  it('revoking a session drops the results it could read', async () => {
    const token = await h.sessions.issue('ws', 'leaving', 'codex')
    const before = h.endpoint.storedResults.results
    await modern({ ...h, token }, 'tools/call', { name: 'cx_accents', arguments: { repeat: 2000 } })
    await modern({ ...h, token }, 'tools/call', { name: 'cx_typed', arguments: { count: 400 } })
    expect(h.endpoint.storedResults.results).toBe(before + 2)
    await h.sessions.revoke({ session: 'leaving' })
    expect(h.endpoint.storedResults.results).toBe(before)
  })
})
