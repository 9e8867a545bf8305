/**
 * Typed errors with stable codes. `kind` decides the CLI exit code:
 * bad input (the caller can fix it) exits 2, a failure of tutti or an
 * upstream exits 1.
 */
export type ErrorKind = 'input' | 'failure'

export const ErrorCodes = {
  // bad input
  MANIFEST_INVALID: 'MANIFEST_INVALID',
  MANIFEST_NOT_FOUND: 'MANIFEST_NOT_FOUND',
  CONNECTOR_NOT_INSTALLED: 'CONNECTOR_NOT_INSTALLED',
  CREDENTIAL_INVALID: 'CREDENTIAL_INVALID',
  ARGUMENT_INVALID: 'ARGUMENT_INVALID',
  COMMAND_NOT_FOUND: 'COMMAND_NOT_FOUND',
  /** Another package is installed under the key (install it with --replace, or under another --key). */
  CONNECTOR_KEY_TAKEN: 'CONNECTOR_KEY_TAKEN',
  /**
   * An OAuth sign-in that could not complete: no metadata, no redirect in time, a state or iss mismatch, a token
   * endpoint error.
   */
  OAUTH_SIGN_IN_FAILED: 'OAUTH_SIGN_IN_FAILED',
  // failures
  DAEMON_START_FAILED: 'DAEMON_START_FAILED',
  DAEMON_UNREACHABLE: 'DAEMON_UNREACHABLE',
  DAEMON_PROTOCOL: 'DAEMON_PROTOCOL',
  STATE_CORRUPT: 'STATE_CORRUPT',
  ROUTE_INVALID: 'ROUTE_INVALID',
  STALE_GENERATION: 'STALE_GENERATION',
  UPSTREAM_FAILED: 'UPSTREAM_FAILED',
  DEPENDENCIES_FAILED: 'DEPENDENCIES_FAILED',
  CONNECTOR_NOT_READY: 'CONNECTOR_NOT_READY',
  /** The daemon holds no usable OAuth grant for a connector: the user signs in again with `connect`. */
  OAUTH_NEEDS_AUTH: 'OAUTH_NEEDS_AUTH',
  LOCK_TIMEOUT: 'LOCK_TIMEOUT',
  LOCK_COMPROMISED: 'LOCK_COMPROMISED',
  INTERNAL: 'INTERNAL',
  /** A file of an installed release changed on disk after it was read (a Skill file served over MCP). */
  RELEASE_CHANGED: 'RELEASE_CHANGED',
  /** A request withdrawn before its answer came: the client cancelled it. */
  CANCELLED: 'CANCELLED',
  // refusals of the daemon's HTTP surface: the CLI meets them only when it talks to a daemon that is not its
  // own (another token, another version), which is a failure, not bad input
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  UNKNOWN_MESSAGE: 'UNKNOWN_MESSAGE',
} as const

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes]

const INPUT_CODES = new Set<string>([
  ErrorCodes.MANIFEST_INVALID,
  ErrorCodes.MANIFEST_NOT_FOUND,
  ErrorCodes.CONNECTOR_NOT_INSTALLED,
  ErrorCodes.CREDENTIAL_INVALID,
  ErrorCodes.ARGUMENT_INVALID,
  ErrorCodes.COMMAND_NOT_FOUND,
  ErrorCodes.CONNECTOR_KEY_TAKEN,
  ErrorCodes.OAUTH_SIGN_IN_FAILED,
])

export class TuttiError extends Error {
  readonly code: ErrorCode
  readonly kind: ErrorKind

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'TuttiError'
    this.code = code
    this.kind = INPUT_CODES.has(code) ? 'input' : 'failure'
  }

  get exitCode(): 1 | 2 {
    return this.kind === 'input' ? 2 : 1
  }

  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message }
  }
}

export function isTuttiError(err: unknown): err is TuttiError {
  return err instanceof TuttiError
}

/** Serialized form used on the control API; rebuilt into a TuttiError by the client. */
export interface WireError {
  code: ErrorCode
  message: string
}

export function fromWire(wire: WireError): TuttiError {
  const code = (Object.values(ErrorCodes) as string[]).includes(wire.code) ? wire.code : ErrorCodes.INTERNAL
  return new TuttiError(code, wire.message)
}
