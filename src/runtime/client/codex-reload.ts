import { ErrorCodes, TuttiError } from '../errors.js'
import { SERVER_NAME } from '../names.js'

/** One JSON-RPC request to a running `codex app-server`, resolving with its result (the host's own client). */
export type CodexAppServerRequest = (method: string, params?: unknown) => Promise<unknown>

/**
 * What is rewritten before each reload. Codex (0.171) acts on neither
 * `list_changed` nor a bare `config/mcpServer/reload` for a loaded thread:
 * it reconnects a server only when the server's config differs, so the
 * adapter changes a value that means nothing to the server, a header for
 * an HTTP server, a variable for a stdio one (the bridge).
 */
export const CODEX_REVISION_HEADER = 'X-Tutti-Connectors-Revision'
export const CODEX_REVISION_ENV = 'TUTTI_CONNECTORS_REVISION'

interface ServerConfig {
  url?: unknown
  command?: unknown
}

/**
 * The Codex adapter for `watchConnectors`: each call makes every loaded
 * thread of the app-server reconnect its `connector` server, so the next
 * turn's model request carries the tools as they are now. It writes a new
 * revision into `[mcp_servers.connector]` of the config the app-server
 * reads (`config/value/write`), then asks for `config/mcpServer/reload`.
 *
 *   const watch = await watchConnectors(codexMcpReload(request), { runtime })
 */
export function codexMcpReload(request: CodexAppServerRequest, options: { server?: string } = {}): () => Promise<void> {
  const server = options.server ?? SERVER_NAME
  let keyPath: string | undefined
  let count = 0
  return async () => {
    keyPath ??= revisionKeyPath(server, await configuredServer(request, server))
    // unique across adapters and restarts of the host: a value equal to the last one written would change nothing
    const revision = `${Date.now()}.${++count}`
    await request('config/value/write', { keyPath, value: revision, mergeStrategy: 'replace' })
    await request('config/mcpServer/reload', undefined)
  }
}

async function configuredServer(request: CodexAppServerRequest, server: string): Promise<ServerConfig> {
  const read = (await request('config/read', {})) as
    | { config?: { mcp_servers?: Record<string, ServerConfig> } }
    | undefined
  const config = read?.config?.mcp_servers?.[server]
  if (!config || typeof config !== 'object') {
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `this codex app-server has no [mcp_servers.${server}] in its config: start it with the session's CODEX_HOME, ` +
        `or add the bridge (codex mcp add ${server} -- tutti session bridge)`,
    )
  }
  return config
}

function revisionKeyPath(server: string, config: ServerConfig): string {
  if (typeof config.url === 'string') return `mcp_servers.${server}.http_headers.${CODEX_REVISION_HEADER}`
  if (typeof config.command === 'string') return `mcp_servers.${server}.env.${CODEX_REVISION_ENV}`
  throw new TuttiError(
    ErrorCodes.ARGUMENT_INVALID,
    `[mcp_servers.${server}] of this codex app-server has neither a url nor a command`,
  )
}
