import { expect, it } from 'vitest'
import { CODEX_REVISION_ENV, CODEX_REVISION_HEADER, codexMcpReload } from '../../src/runtime/client/codex-reload.js'
import { TuttiError } from '../../src/runtime/errors.js'

/** The app-server's side, as the adapter sees it: the requests it was sent, answered from `servers`. */
function appServer(servers: Record<string, unknown> | undefined) {
  const sent: Array<{ method: string; params: unknown }> = []
  const request = async (method: string, params?: unknown): Promise<unknown> => {
    sent.push({ method, params })
    if (method === 'config/read')
      return { config: servers === undefined ? {} : { mcp_servers: servers }, origins: {}, layers: null }
    if (method === 'config/value/write') return { status: 'ok' }
    if (method === 'config/mcpServer/reload') return {}
    throw new Error(`unexpected ${method}`)
  }
  return { sent, request }
}

it(
  'an HTTP connector server (the projection): ' +
    'a new revision header, then config/mcpServer/reload, on every change',
  async () => {
    const codex = appServer({
      connector: { url: 'http://127.0.0.1:4000/mcp/connector', bearer_token_env_var: 'TUTTI_CONNECTOR_TOKEN' },
    })
    const reload = codexMcpReload(codex.request)
    await reload()
    await reload()
    expect(codex.sent.map((s) => s.method)).toEqual([
      'config/read',
      'config/value/write',
      'config/mcpServer/reload',
      'config/value/write',
      'config/mcpServer/reload',
    ])
    const writes = codex.sent
      .filter((s) => s.method === 'config/value/write')
      .map((s) => s.params as { keyPath: string; value: string; mergeStrategy: string })
    for (const w of writes)
      expect(w).toMatchObject({
        keyPath: `mcp_servers.connector.http_headers.${CODEX_REVISION_HEADER}`,
        mergeStrategy: 'replace',
      })
    // Codex reconnects only a server whose config changed: two writes never carry the same value
    expect(writes[0]!.value).not.toBe(writes[1]!.value)
  },
)

it('a stdio connector server (the bridge): the revision goes into its environment', async () => {
  const codex = appServer({ connector: { command: 'tutti', args: ['session', 'bridge'] } })
  await codexMcpReload(codex.request)()
  expect(codex.sent[1]).toMatchObject({
    method: 'config/value/write',
    params: { keyPath: `mcp_servers.connector.env.${CODEX_REVISION_ENV}` },
  })
})

it('another server name can be given', async () => {
  const codex = appServer({ tools: { url: 'http://127.0.0.1:4000/mcp/connector' } })
  await codexMcpReload(codex.request, { server: 'tools' })()
  expect(codex.sent[1]).toMatchObject({
    params: { keyPath: `mcp_servers.tools.http_headers.${CODEX_REVISION_HEADER}` },
  })
})

it('an app-server without the connector server: a clear error, and nothing written or reloaded', async () => {
  for (const servers of [undefined, {}, { other: { url: 'http://x' } }, { connector: { enabled: true } }]) {
    const codex = appServer(servers)
    const err = await codexMcpReload(codex.request)().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TuttiError)
    expect((err as TuttiError).code).toBe('ARGUMENT_INVALID')
    expect((err as TuttiError).message).toMatch(/mcp_servers\.connector/)
    expect(codex.sent.map((s) => s.method)).toEqual(['config/read'])
  }
})

it(
  'an app-server error reaches the caller as it was ' + "(the watcher's onError), and the next change tries again",
  async () => {
    let fail = true
    const sent: string[] = []
    const request = async (method: string): Promise<unknown> => {
      sent.push(method)
      if (method === 'config/read')
        return { config: { mcp_servers: { connector: { url: 'http://127.0.0.1:1/mcp/connector' } } } }
      if (method === 'config/mcpServer/reload' && fail) throw new Error('-32603: reload failed')
      return {}
    }
    const reload = codexMcpReload(request)
    await expect(reload()).rejects.toThrow('-32603: reload failed')
    fail = false
    await reload()
    expect(sent).toEqual([
      'config/read',
      'config/value/write',
      'config/mcpServer/reload',
      'config/value/write',
      'config/mcpServer/reload',
    ])
  },
)
