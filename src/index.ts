/**
 * tutti as a library, for TypeScript agent hosts: prepare an agent session's
 * runtime (env, the connector MCP server, Skill roots, provider projection)
 * exactly as `tutti session prepare` does, and follow its connector changes
 * for an agent that does not act on MCP list_changed (Codex).
 */
export { prepareRuntime, revokeSessions, type PrepareRuntimeOptions } from './runtime/client/sessions.js'
export { PROVIDERS, type Provider } from './runtime/control-protocol/session-prepare.js'
export type {
  AcpProjection,
  ClaudeProjection,
  CodexProjection,
  MCPServerBinding,
  PreparedRuntime,
  ProviderProjection,
  SkillRoot,
} from './runtime/sessions/prepared-runtime.js'
export { TOKEN_ENV } from './runtime/sessions/prepared-runtime.js'
export { statePaths, resolveStateDir } from './runtime/paths.js'
export { watchConnectors, type ConnectorWatch, type WatchConnectorsOptions } from './runtime/client/watch-connectors.js'
export { codexMcpReload, type CodexAppServerRequest } from './runtime/client/codex-reload.js'
