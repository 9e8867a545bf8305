/**
 * Version of the CLI ↔ daemon control protocol, independent of the product
 * version. A CLI and a daemon must agree on both; any mismatch makes the CLI
 * replace the daemon (politely first).
 */
export const CONTROL_PROTOCOL_VERSION = 2

export const CONTROL_PREFIX = '/control'
