import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { connected, installed } from '../support/in-process.js'
import { BIN, cleanupState, EXAMPLES, tempStateDir, tuttiEnv } from '../support/tutti.js'

/**
 * A stdio client behind `tutti session bridge` (a static config) gets the
 * requests an upstream sends while serving its call, and its answers reach
 * the upstream: a 2025 client's answer is a line the bridge POSTs back, a
 * 2026-07-28 client's is its input_required retry.
 */
const ELICIT = 'everything_trigger-elicitation-request'

describe('server requests through the session bridge', () => {
  let dir: string
  const clients: Client[] = []
  beforeAll(async () => {
    dir = tempStateDir('relay-bridge')
    await installed(dir, path.join(EXAMPLES, 'everything'))
    await connected(dir, 'everything', { env: { EVERYTHING_API_KEY: 'bridge-key' } })
  })
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined)
    await cleanupState(dir)
  })

  it.each(['legacy', 'modern'] as const)('%s client: an elicitation round trip through the bridge', async (era) => {
    const client = new Client(
      { name: `bridge-relay-${era}`, version: '1' },
      era === 'legacy'
        ? { capabilities: { elicitation: { form: {} } }, supportedProtocolVersions: ['2025-06-18'] }
        : { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    clients.push(client)
    const asked: string[] = []
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message)
      return { action: 'accept', content: { name: `Lovelace (${era})` } }
    })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'session', 'bridge'],
        env: tuttiEnv(dir) as Record<string, string>,
        stderr: 'pipe',
      }),
    )
    // server-everything offers the tool once tutti's client declared elicitation (after its initialize)
    await client.callTool({ name: 'everything_echo', arguments: { message: 'start' } })
    await eventually(
      async () => (await client.listTools()).tools.map((t) => t.name),
      (names) => names.includes(ELICIT),
    )
    const result = await client.callTool({ name: ELICIT, arguments: {} })
    expect(JSON.stringify(result.content)).toContain(`Name: Lovelace (${era})`)
    expect(asked).toEqual([expect.stringMatching(/provide inputs/)])
  })
})
