import { describe, expect, it } from 'vitest'
import { silentStartHint } from '../../src/runtime/upstream/silent-start-hint.js'

describe('silentStartHint: why a stdio server never answered initialize, from what it printed', () => {
  it('an HTTP server’s address, on stdout or stderr, says so and names the usual stdio switch', () => {
    const out = silentStartHint('MCP server listening on http://localhost:3001/mcp', '')
    expect(out).toBe(
      '; it printed "MCP server listening on http://localhost:3001/mcp": it looks like an HTTP server, not a ' +
        'stdio one. Its README may name the argument that selects stdio (often --stdio or stdio, after "--" at ' +
        'install), or install its URL as a remote server',
    )
    expect(silentStartHint(undefined, 'booting\nServer started on port 8080')).toContain(
      'it printed "Server started on port 8080": it looks like an HTTP server',
    )
  })

  it('a server that says it runs on stdio is not taken for an HTTP one', () => {
    const out = silentStartHint(undefined, 'Secure MCP Filesystem Server running on stdio')
    expect(out).toBe('; stderr: Secure MCP Filesystem Server running on stdio')
  })

  it('other stdout is quoted as not JSON-RPC; nothing printed at all is said too', () => {
    expect(silentStartHint('Welcome! Type a command:', '')).toBe(
      '; the first line on its stdout was not JSON-RPC: "Welcome! Type a command:"',
    )
    expect(silentStartHint(undefined, '')).toBe(
      '; it printed nothing: it may wait for an argument that selects stdio, or for input (see its README)',
    )
  })
})
