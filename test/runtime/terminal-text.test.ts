import { expect, it } from 'vitest'
import { renderAvailable } from '../../src/cli/available-table.js'
import { renderDaemonStatus } from '../../src/cli/daemon-status-text.js'
import { terminalSafe } from '../../src/cli/terminal-text.js'

const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

it('C0, DEL, C1 controls and bidi overrides become visible escapes; ordinary text is untouched', () => {
  expect(terminalSafe('a\u001b[2Jb\u0007c\rd\ne\tf\u0000g\u007fh\u009bi\u0085j')).toBe(
    'a\\x1b[2Jb\\x07c\\rd\\ne\\tf\\x00g\\x7fh\\x9bi\\x85j',
  )
  expect(terminalSafe('abc\u202edef\u2066')).toBe('abc\\u202edef\\u2066')
  expect(terminalSafe('Grüße — 日本語 C:\\path ✓')).toBe('Grüße — 日本語 C:\\path ✓')
})

it('both tables escape every manifest and upstream string, and keep their columns aligned', () => {
  const evil = 'x\u001b]0;t\u0007\u009b2J'
  const table = renderAvailable({
    connectors: [
      {
        key: 'k',
        name: evil,
        description: evil,
        skills: [{ name: 's', title: evil, description: evil }],
        interfaces: [{ kind: 'cli', command: evil, status: 'failed', reason: evil }],
      },
      {
        key: 'k2',
        name: 'Plain',
        description: '',
        skills: [],
        interfaces: [{ kind: 'cli', command: 'tutti-connector-k2', status: 'ready' }],
      },
    ],
  })
  expect(table).not.toMatch(RAW_CONTROL)
  const [header, first, second] = table.split('\n')
  expect(first!.indexOf('cli')).toBe(header!.indexOf('INTERFACE'))
  expect(second!.indexOf('cli')).toBe(header!.indexOf('INTERFACE'))
  const status = renderDaemonStatus({
    running: true,
    pid: 1,
    port: 2,
    productVersion: evil,
    protocolVersion: 1,
    uptimeMs: 0,
    sessions: 1,
    // a session and workspace id are whatever an agent host passed, and a view's source is a path
    sessionActivity: [
      { workspace: evil, session: evil, provider: 'claude', requests: 1, view: [`project file ${evil}`] },
    ],
    connectors: [
      {
        key: 'k',
        version: evil,
        status: 'failed',
        generation: 1,
        tools: 0,
        reason: evil,
        lastError: `${evil}!`,
        command: evil,
        settings: { A: evil },
        cli: 'failed',
        cliReason: evil,
      },
    ],
  } as never)
  expect(status).not.toMatch(RAW_CONTROL)
  expect(status).toContain('k x\\x1b]0;t\\x07\\x9b2J: failed')
})

it('a running upstream says its pid and the MCP revision tutti speaks to it', () => {
  const status = renderDaemonStatus({
    running: true,
    pid: 1,
    port: 2,
    productVersion: '1',
    protocolVersion: 1,
    uptimeMs: 0,
    sessions: 0,
    sessionActivity: [],
    connectors: [
      {
        key: 'news',
        version: '1.0.0',
        status: 'ready',
        generation: 1,
        tools: 4,
        upstream: 'running',
        pid: 42,
        protocolVersion: '2026-07-28',
      },
      {
        key: 'up',
        version: '2.0.0',
        status: 'ready',
        generation: 1,
        tools: 1,
        upstream: 'running',
        protocolVersion: '2025-11-25',
      },
    ],
  } as never)
  expect(status).toContain('news 1.0.0: ready, generation 1, 4 tools, upstream running (pid 42, MCP 2026-07-28)')
  expect(status).toContain('up 2.0.0: ready, generation 1, 1 tool, upstream running (MCP 2025-11-25)')
})
