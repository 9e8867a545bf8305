import { ErrorCodes, TuttiError } from '../errors.js'
import type { ConnectorState } from '../control-protocol/connector-state.js'

// What install and connect wait for after changing the state: the daemon's outcome for the connector.

/**
 * How long install and connect wait for a connector's outcome by default: an npx-started server can take a while,
 * and a start that runs into the daemon's own bound (30 s, UPSTREAM_LIMITS.connectTimeoutMs) must end within the
 * wait, so that the command says why it failed (what the server printed) rather than "not ready".
 */
export const OUTCOME_WAIT_MS = 45_000

export interface OutcomeWait {
  /** false: ask the daemon to reconcile and return at once (`--no-wait`). */
  wait: boolean
  timeoutMs: number
}

/**
 * A connector that has no outcome, or a failed one, fails the command (exit 1) with the reason; the change itself is
 * kept.
 */
export function expectOutcome(done: string, state: ConnectorState | undefined, wait: OutcomeWait): void {
  if (!wait.wait) return
  if (!state)
    throw new TuttiError(
      ErrorCodes.CONNECTOR_NOT_READY,
      `${done}, but the daemon reports nothing about it; see \`tutti daemon status\``,
    )
  if (state.status === 'failed')
    throw new TuttiError(
      ErrorCodes.CONNECTOR_NOT_READY,
      `${done}, but its MCP server failed: ${state.reason ?? state.error ?? 'no reason given'}`,
    )
  const change = state.failedChange
  if (change) {
    const failed = `${done}, but its MCP server failed: ${change.reason}`
    throw new TuttiError(ErrorCodes.CONNECTOR_NOT_READY, `${failed}; ${change.servingVersion} keeps serving`)
  }
  if (state.status === 'starting') {
    throw new TuttiError(
      ErrorCodes.CONNECTOR_NOT_READY,
      `${done}, but it was not ready within ${Math.round(wait.timeoutMs / 1000)} s: ` +
        `${state.reason ?? 'still starting'} (it keeps trying; see \`tutti daemon status\`)`,
    )
  }
  if (state.cli === 'failed')
    throw new TuttiError(
      ErrorCodes.CONNECTOR_NOT_READY,
      `${done}, but its command could not be published: ${state.cliReason ?? 'no reason given'}`,
    )
}
