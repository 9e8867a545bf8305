/** The bounds of one upstream connection, named once. */
export const UPSTREAM_LIMITS = {
  maxMessageBytes: 16 * 1024 * 1024,
  maxToolPages: 100,
  maxTools: 5_000,
  connectTimeoutMs: 30_000,
  callTimeoutMs: 10 * 60_000,
  closeGraceMs: 2_000,
  drainTimeoutMs: 30_000,
} as const
