/**
 * `ready`, `needs-auth: not connected: missing X (…)`, or `ready (1.0.0 serving; 1.1.0 failed: …)`: the state
 * line a person reads.
 */
export function describeState(state: { status: string; reason?: string } | undefined): string {
  if (!state) return 'reconcile requested'
  if (!state.reason) return state.status
  return state.status === 'ready' ? `ready (${state.reason})` : `${state.status}: ${state.reason}`
}
