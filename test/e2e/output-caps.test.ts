import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, tempStateDir, tuttiJson } from '../support/tutti.js'

// A tool result over its cap reaches the agent cut, with a note and a link;
// the whole stays readable by the session that made the call, in pieces.
// A real daemon (its cap from TUTTI_MAX_RESULT_BYTES), a real stdio upstream
// (the fault server's large-result tools), the SDK client in both eras.
const DAEMON_CAP = 20_000
const CONNECTOR_CAP = 4096
const URI = /^tutti:\/\/results\/[A-Za-z0-9_-]{22}$/

type Block = { type: string; text?: string; data?: string; uri?: string; mimeType?: string }
type Piece = { uri: string; mimeType?: string; text?: string; blob?: string }

let dir: string
let mine: Binding
let theirs: Binding
const clients: Client[] = []

beforeAll(async () => {
  dir = tempStateDir('caps')
  // the daemon's own cap, from the environment it starts with
  await tuttiJson(dir, ['daemon', 'start'], { env: { TUTTI_MAX_RESULT_BYTES: String(DAEMON_CAP) } })
  const env = { FIXTURE_CAP_TOOLS: '1' }
  await installed(dir, faultConnector({ key: 'fx', env }))
  // a connector whose manifest sets a smaller cap for its own tools
  await installed(dir, faultConnector({ key: 'sm', env, maxResultBytes: CONNECTOR_CAP }))
  mine = (await prepared(dir, { session: 'mine' })).mcpServers[0]!
  theirs = (await prepared(dir, { session: 'theirs' })).mcpServers[0]!
})
afterAll(async () => {
  for (const c of clients) await c.close()
  await cleanupState(dir)
})

const ERAS = [
  ['2026-07-28', modernClient],
  ['2025-06-18', legacyClient],
] as const

async function connect(era: (typeof ERAS)[number][1], binding: Binding): Promise<Client> {
  const client = await era(binding)
  clients.push(client)
  return client
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args })
  return { result, content: result.content as Block[] }
}

/** Every piece of a stored result, following the line that names the next. */
async function readWhole(client: Client, uri: string): Promise<Piece[]> {
  const items: Piece[] = []
  let next: string | undefined = uri
  while (next) {
    const { contents } = await client.readResource({ uri: next })
    const last = contents.at(-1) as Piece
    next = last.text ? /the next is (tutti:\/\/\S+)\.$/.exec(last.text)?.[1] : undefined
    items.push(...((next ? contents.slice(0, -1) : contents) as Piece[]))
  }
  return items
}

describe.each(ERAS)('%s', (_era, open) => {
  it('text over the daemon’s cap is cut at a character, and read back whole by its own session', async () => {
    const client = await connect(open, mine)
    const message = 'line é中😀 "quoted"\n'.repeat(4000)
    const { result, content } = await call(client, 'fx_echo', { message })
    expect(content[0]!.text).toMatch(
      /^\[tutti\] This tool result is [\d,]+ bytes, over the cap of 20,000 bytes .* Cut: content 1 \(text: the first/,
    )
    const kept = content[1]!.text!
    expect(message.startsWith(kept)).toBe(true)
    // the cap less the room of the note and the link
    expect(Buffer.byteLength(kept)).toBeGreaterThan(DAEMON_CAP - 2000)
    expect(Buffer.byteLength(kept)).toBeLessThan(DAEMON_CAP)
    expect(Buffer.from(kept).toString()).toBe(kept)
    const link = content.at(-1)!
    expect(link).toMatchObject({ type: 'resource_link', uri: expect.stringMatching(URI) })
    expect(result.isError).toBeFalsy()

    const whole = await readWhole(client, link.uri!)
    expect(whole.map((p) => p.text).join('')).toBe(message)
    expect(new Set(whole.map((p) => p.mimeType))).toEqual(new Set(['text/plain']))
  })

  it('another session’s token gets "resource not found" for the same URI', async () => {
    const client = await connect(open, mine)
    const { content } = await call(client, 'fx_echo', { message: 'x'.repeat(50_000) })
    const uri = content.at(-1)!.uri!
    expect((await client.readResource({ uri })).contents[0]).toMatchObject({ uri, text: expect.any(String) })
    const other = await connect(open, theirs)
    await expect(other.readResource({ uri })).rejects.toThrow(`resource not found: ${uri}`)
    await expect(other.readResource({ uri: `${uri}/2` })).rejects.toThrow('resource not found')
  })

  it('images are kept whole or left out, never cut; the connector’s own cap wins over the daemon’s', async () => {
    const client = await connect(open, mine)
    // 3 images of 1,500 bytes (2,000 in base64) against sm's 4,096 (less the note's room): the first fits, no more
    const { content } = await call(client, 'sm_pictures', { count: 3, bytes: 1500 })
    const data = Buffer.alloc(1500, 0x89).toString('base64')
    expect(content.slice(1, -1)).toEqual([
      { type: 'text', text: 'pictures follow' },
      { type: 'image', data, mimeType: 'image/png' },
      { type: 'text', text: 'the end' },
    ])
    expect(content[0]!.text).toMatch(
      /over the cap of 4,096 bytes .* Left out: content 3 \(image, [\d,]+ bytes\); content 4/,
    )
    const whole = await readWhole(client, content.at(-1)!.uri!)
    expect(whole.filter((p) => p.blob).map((p) => [p.mimeType, p.blob])).toEqual(Array(3).fill(['image/png', data]))
    expect(whole.filter((p) => p.text).map((p) => p.text)).toEqual(['pictures follow', 'the end'])
    // the same result under fx's (the daemon's) 20,000 passes whole
    const { content: uncut } = await call(client, 'fx_pictures', { count: 3, bytes: 1500 })
    expect(uncut).toHaveLength(5)
  })

  it('a typed tool whose structuredContent was left out: the SDK client accepts the result, an error', async () => {
    const client = await connect(open, mine)
    // the client validates structuredContent against the outputSchema it listed
    const tools = (await client.listTools()).tools
    expect(tools.find((t) => t.name === 'sm_typed')?.outputSchema).toBeDefined()
    const small = await client.callTool({ name: 'sm_typed', arguments: { count: 3 } })
    expect(small.structuredContent).toEqual({ items: ['item 0 ✓', 'item 1 ✓', 'item 2 ✓'] })

    const { result, content } = await call(client, 'sm_typed', { count: 1000 })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(content[0]!.text).toContain('Left out: structuredContent (')
    expect(content[0]!.text).toContain('Marked as an error because the tool declares an outputSchema')
    const whole = await readWhole(client, content.at(-1)!.uri!)
    const json = whole
      .filter((p) => p.mimeType === 'application/json')
      .map((p) => p.text)
      .join('')
    expect(JSON.parse(json).structuredContent.items).toHaveLength(1000)
  })
})
