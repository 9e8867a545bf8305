// Shapes shared by the target modules (JSDoc only).

/**
 * One way of reaching the upstream through a target: a protocol era and a
 * transport, with the tool name it exposes for server-everything's `echo`.
 * @typedef {object} Variant
 * @property {string} era                 '2026-07-28' or '2025-06-18'
 * @property {string} transport           'stdio' | 'streamable-http' | 'sse'
 * @property {string | RegExp} tool       the echo tool's name (or a pattern matching exactly one tool)
 * @property {() => Promise<import('../clients.js').Connected>} connect   the SDK client
 * @property {import('../raw/client.js').RawSpec} [raw]   how the raw HTTP client reaches it (HTTP targets only)
 */

/**
 * A target that has been started (its processes are running).
 * @typedef {object} StartedTarget
 * @property {Variant[]} variants
 * @property {string} command             how it was started, for the report
 * @property {string[]} [notes]
 * @property {() => number | undefined} [gatewayPid]  the process between client and upstream, for its CPU time
 * @property {string[]} [listens]        TCP addresses the peer listens on (checked to be loopback)
 * @property {() => Promise<string | void>} stop   stops everything it started
 */

/**
 * @typedef {object} TargetDef
 * @property {string} id                  as in BENCH_TARGETS
 * @property {string} label               row label
 * @property {(ctx: import('../context.js').RunContext) => Promise<StartedTarget>} start
 */

export {}
