/** One disagreement between a facade and the registry, with a concrete fix. */
export interface Finding {
  check: 'health' | 'available' | 'mcp-2026-07-28' | 'mcp-2025-06-18' | 'shims' | 'skills' | 'declared-tools'
  connector?: string
  problem: string
  fix: string
}

export const RECONCILE_FIX =
  'run `tutti daemon start`: it reconciles every connector (republishing missing shims, removing strays)'
