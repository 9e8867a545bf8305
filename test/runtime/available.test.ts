import path from 'node:path'
import { expect, it } from 'vitest'
import { buildAvailable } from '../../src/runtime/available/build-available.js'
import { loadRelease } from '../../src/runtime/manifest/load.js'
import { availableResult } from '../../src/runtime/protocol/available.js'
import { EXAMPLES } from '../support/tutti.js'

it('builds the documented shape, sorted by key, from names and statuses only', async () => {
  const notes = await loadRelease(path.join(EXAMPLES, 'notes'))
  const everything = await loadRelease(path.join(EXAMPLES, 'everything'))
  const out = buildAvailable([
    { key: 'notes', name: 'Notes', release: notes, mcpStatus: 'ready', cliStatus: 'ready' },
    { key: 'everything', name: 'Everything', release: everything, mcpStatus: 'needs-auth', cliStatus: 'needs-auth' },
  ])
  expect(out.connectors.map((c) => c.key)).toEqual(['everything', 'notes'])
  expect(out.connectors[1]).toEqual({
    key: 'notes',
    name: 'Notes',
    description: notes.manifest.description,
    skills: [{ name: 'notes-workflow', title: 'Notes Workflow', description: expect.any(String) }],
    interfaces: [
      { kind: 'mcp', serverName: 'connector', toolPrefix: 'notes_', status: 'ready' },
      { kind: 'cli', command: 'tutti-connector-notes', status: 'ready' },
    ],
  })
  expect(JSON.stringify(out)).not.toContain(EXAMPLES)
})

it('the wire schema refuses any extra field (a URL, a path) riding along', () => {
  const leaky = { connectors: [{ key: 'a', name: 'A', description: '', skills: [], interfaces: [{ kind: 'mcp', serverName: 'connector', toolPrefix: 'a_', status: 'ready', url: 'http://127.0.0.1:1/mcp' }] }] }
  expect(availableResult.safeParse(leaky).success).toBe(false)
})

it('an unreadable release still lists the connector, with no interfaces', () => {
  const out = buildAvailable([{ key: 'gone', name: 'Gone', mcpStatus: 'failed', cliStatus: 'failed' }])
  expect(out.connectors).toEqual([{ key: 'gone', name: 'Gone', description: '', skills: [], interfaces: [] }])
})
