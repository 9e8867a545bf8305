/**
 * The names tutti gives things that others see: the MCP server, the shim
 * commands, the environment variables. Spelled once (MCP's own: mcp-wire.ts).
 */

/** At a release's root: what makes a directory a connector. */
export const MANIFEST_FILE = 'tutti-connector.json'

/** The one MCP server every agent sees. */
export const SERVER_NAME = 'connector'

/** `tutti-connector-<key>`: a connector's CLI on the agent's PATH. */
export const SHIM_PREFIX = 'tutti-connector-'
export const shimCommand = (key: string): string => `${SHIM_PREFIX}${key}`

/** `<key>_`: a connector's tools on the connector server. */
export const toolPrefix = (key: string): string => `${key}_`

/** The agent session's token, in the agent's environment (never in a file or argv). */
export const TOKEN_ENV = 'TUTTI_CONNECTOR_TOKEN'
/** How long a prepared session's token lives unless a `--ttl` says otherwise (`90m`, `12h`, `7d`). */
export const SESSION_TTL_ENV = 'TUTTI_SESSION_TTL'
/** The daemon's cap on one tool result, in bytes of its JSON (docs/output-caps.md). */
export const MAX_RESULT_BYTES_ENV = 'TUTTI_MAX_RESULT_BYTES'
/** A connector's own writable data directory, in its server's and CLI's environment. */
export const DATA_DIR_VAR = 'TUTTI_CONNECTOR_DATA'
/**
 * The installed release's root directory, for a server's arguments and environment (plugins' `${CLAUDE_PLUGIN_ROOT}`).
 */
export const RELEASE_ROOT_VAR = 'TUTTI_CONNECTOR_ROOT'
/** Names connectors may not declare. */
export const RESERVED_VAR_PREFIX = 'TUTTI_'

/**
 * The SDK's own paths, for bisecting a bug against the SDK (docs/decisions/).
 * Read when the daemon starts; "1" turns the bypass off.
 * NO_FAST_PATH: every MCP request is served by the SDK's handler (no node front, no fast encoder).
 * NO_DIRECT_CALLS: every upstream tools/call goes through the SDK client's callTool.
 * NO_ERA_PROBE: a stdio upstream gets the SDK client's plain 2025 initialize, no server/discover first.
 */
export const NO_FAST_PATH_ENV = 'TUTTI_NO_FAST_PATH'
export const NO_DIRECT_CALLS_ENV = 'TUTTI_NO_DIRECT_CALLS'
export const NO_ERA_PROBE_ENV = 'TUTTI_NO_ERA_PROBE'
export const switchedOff = (name: string, env: NodeJS.ProcessEnv = process.env): boolean => env[name] === '1'

/** How tutti introduces itself to upstream servers. */
export const UPSTREAM_CLIENT_INFO = { name: 'tutti-connector-runtime', version: '1' } as const
