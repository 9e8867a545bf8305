import { SdkError, SdkErrorCode, type Transport } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'
import { missingVariableHint } from './missing-variable.js'
import { nativeModuleHint } from './native-module-hint.js'
import { silentStartHint } from './silent-start-hint.js'
import { stderrSummary } from './stderr-summary.js'
import { ProcessGroupStdioTransport } from './stdio-transport.js'
import type { UpstreamSpec } from './upstream-spec.js'

/**
 * How an upstream connection's failures are told, as a person would put
 * them: the exit and its stderr, the bound that ran out and where it is
 * set, never the SDK's bare "Connection closed".
 */

/** The start took longer than its bound (mcp.timeouts.startupSeconds, else UPSTREAM_LIMITS.connectTimeoutMs). */
export class StartupTimeout extends Error {}

/** A bound as a person reads it: "1 s", "1.5 s", "600 s". */
export const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`

/** How the connection ended: a stdio process's exit, its stderr's gist and a hint; else "connection closed". */
export function describeExit(spec: UpstreamSpec, transport: Transport): string {
  if (transport instanceof ProcessGroupStdioTransport) {
    const tail = transport.stderrTail()
    const native = nativeModuleHint(tail)
    const hint = missingVariableHint(spec.key, tail)
    return `${transport.exit() ?? 'connection closed'}${native ? `; ${native}` : stderrSummary(tail)}${hint}`
  }
  return 'connection closed'
}

/** Why the server never answered initialize. */
export function connectFailure(spec: UpstreamSpec, transport: Transport, cause: unknown): TuttiError {
  // the process exits because the start timed out and it was stopped: the timeout is the reason, not that exit
  if (cause instanceof StartupTimeout) {
    const hint =
      transport instanceof ProcessGroupStdioTransport
        ? silentStartHint(transport.stdoutNoise(), transport.stderrTail())
        : ''
    return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `could not connect: ${cause.message}${hint}`, { cause })
  }
  if (transport instanceof ProcessGroupStdioTransport && transport.exit()) {
    const exit = transport.exit()!
    const tail = transport.stderrTail()
    const said = nativeModuleHint(tail) ?? stderrSummary(tail).replace(/^; stderr: /, '')
    const stderr = said ? `: ${said}` : ''
    const hint = missingVariableHint(spec.key, tail)
    const message = exit.startsWith('command ') ? exit : `${exit} before it answered initialize${stderr}${hint}`
    return new TuttiError(ErrorCodes.UPSTREAM_FAILED, message, { cause })
  }
  return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `could not connect: ${(cause as Error).message}`, { cause })
}

/** A call the upstream did not answer in time, said with the bound and where it is set; else undefined. */
export function timedOut(
  spec: UpstreamSpec,
  callTimeoutMs: number,
  err: unknown,
  upstreamName: string,
): TuttiError | undefined {
  // a cancel is a RequestTimeout to the SDK as well; only its own timer's carries the bound
  const bound = (err as SdkError).data as { timeout?: unknown } | undefined
  if (!(err instanceof SdkError) || err.code !== SdkErrorCode.RequestTimeout) return undefined
  if (bound?.timeout === undefined) return undefined
  const where = spec.timeouts?.toolCallMs ? 'mcp.timeouts.toolCallSeconds' : "tutti's default"
  const within = `${seconds(callTimeoutMs)} (${where})`
  const tool = `connector "${spec.key}": tool "${upstreamName}"`
  const message = `${tool} timed out: no answer within ${within}; the call was cancelled`
  return new TuttiError(ErrorCodes.UPSTREAM_FAILED, message, { cause: err })
}

/** A request of the connection failed: what, why, and the exit when the process is gone. */
export function failure(spec: UpstreamSpec, transport: Transport, what: string, cause?: unknown): TuttiError {
  const detail = cause ? `: ${(cause as Error).message}` : ''
  const described =
    transport instanceof ProcessGroupStdioTransport && transport.exit() ? describeExit(spec, transport) : ''
  const exit = described && !detail.includes(described) && !what.includes(described) ? ` (${described})` : ''
  return new TuttiError(ErrorCodes.UPSTREAM_FAILED, `connector "${spec.key}": ${what}${detail}${exit}`, { cause })
}
