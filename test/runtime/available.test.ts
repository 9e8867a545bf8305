import path from 'node:path'
import { expect, it } from 'vitest'
import { buildAvailable } from '../../src/runtime/reconcile/build-available.js'
import { loadRelease, type LoadedRelease } from '../../src/runtime/manifest/load.js'
import { availableResult } from '../../src/runtime/control-protocol/available.js'
import type { ConnectorSnapshot } from '../../src/runtime/reconcile/connector-snapshot.js'
import { EXAMPLES } from '../support/tutti.js'

const snapshot = (
  r: LoadedRelease,
  status: 'ready' | 'needs-auth',
  extra: Partial<ConnectorSnapshot> = {},
): ConnectorSnapshot => ({
  key: r.manifest.key,
  name: r.manifest.name,
  version: r.manifest.version,
  description: r.manifest.description,
  releaseRoot: r.root,
  skills: r.skills,
  active: status === 'ready',
  generation: 1,
  tools: 3,
  toolBytes: 1234,
  mcp: { status, activation: 'eager', ...(status === 'ready' ? {} : { reason: `missing KEY in ${r.root}` }) },
  cli: { status, shimGeneration: 1 },
  lastChange: new Date().toISOString(),
  ...extra,
})

it('builds the documented shape, sorted by key, from names, statuses and scrubbed reasons only', async () => {
  const notes = await loadRelease(path.join(EXAMPLES, 'notes'))
  const everything = await loadRelease(path.join(EXAMPLES, 'everything'))
  const out = buildAvailable([snapshot(notes, 'ready'), snapshot(everything, 'needs-auth')], (t) =>
    t.split(everything.root).join('<state>'),
  )
  expect(out.connectors.map((c) => c.key)).toEqual(['everything', 'notes'])
  expect(out.connectors[1]).toEqual({
    key: 'notes',
    name: 'Notes',
    description: notes.manifest.description,
    skills: [{ name: 'notes-workflow', title: 'Notes Workflow', description: expect.any(String) }],
    interfaces: [
      { kind: 'mcp', serverName: 'connector', toolPrefix: 'notes_', status: 'ready', tools: 3, schemaBytes: 1234 },
      { kind: 'cli', command: 'tutti-connector-notes', status: 'ready' },
    ],
  })
  expect(out.connectors[0]!.interfaces[0]).toEqual({
    kind: 'mcp',
    serverName: 'connector',
    toolPrefix: 'everything_',
    status: 'needs-auth',
    reason: 'missing KEY in <state>',
  })
  // an inactive connector (needs-auth, disabled) serves nothing: no cost is shown for it, not even "0 tools"
  const active = buildAvailable([snapshot(everything, 'needs-auth', { active: true })])
  expect(active.connectors[0]!.interfaces[0]).toMatchObject({ tools: 3, schemaBytes: 1234 })
  // no table committed yet: the cost is not known, and not guessed
  const unknown = buildAvailable([snapshot(notes, 'ready', { generation: 0, tools: 0, toolBytes: 0 })])
  expect(unknown.connectors[0]!.interfaces[0]).not.toHaveProperty('tools')
  expect(JSON.stringify(out)).not.toContain(EXAMPLES)
  expect(availableResult.safeParse(out).success).toBe(true)
})

it('the wire schema refuses any extra field (a URL, a path) riding along', () => {
  const leaky = {
    connectors: [
      {
        key: 'a',
        name: 'A',
        description: '',
        skills: [],
        interfaces: [
          { kind: 'mcp', serverName: 'connector', toolPrefix: 'a_', status: 'ready', url: 'http://127.0.0.1:1/mcp' },
        ],
      },
    ],
  }
  expect(availableResult.safeParse(leaky).success).toBe(false)
})

it('an unreadable release still lists the connector, with no MCP interface to offer', () => {
  const gone: ConnectorSnapshot = {
    key: 'gone',
    name: 'Gone',
    version: '1',
    description: '',
    skills: [],
    active: false,
    generation: 0,
    tools: 0,
    toolBytes: 0,
    mcp: { status: 'failed', activation: 'eager', reason: 'unreadable' },
    lastChange: '',
  }
  expect(buildAvailable([gone]).connectors).toEqual([
    { key: 'gone', name: 'Gone', description: '', skills: [], interfaces: [] },
  ])
})

it('the ABOUT section lines descriptions up as one column', async () => {
  const { renderAvailable } = await import('../../src/cli/available-table.js')
  const mcp = (key: string) => ({
    kind: 'mcp' as const,
    serverName: 'connector' as const,
    toolPrefix: `${key}_`,
    status: 'ready' as const,
  })
  const connector = (key: string, description: string) => ({
    key,
    name: key,
    description,
    skills: [] as never[],
    interfaces: [mcp(key)],
  })
  const text = renderAvailable({
    connectors: [connector('brave-search', 'Search'), connector('sequential-thinking', 'Think')],
  })
  const about = text
    .slice(text.indexOf('ABOUT\n') + 'ABOUT\n'.length)
    .trimEnd()
    .split('\n')
  expect(about).toEqual(['  brave-search         Search', '  sequential-thinking  Think'])
})
