import {
  declaredToolsOf,
  effectiveActivation,
  type EffectiveActivation,
  type McpServerSpec,
} from '../manifest/server-schema.js'
import { compareToolTables, type ToolDifference } from '../registry/declared-tools.js'
import type { UpstreamTool } from '../registry/route.js'
import type { Activation } from '../upstream/upstream-supervisor.js'

/** Failed restarts after which a dead upstream's tools are withdrawn (retries go on). */
export const WITHDRAW_AFTER_FAILURES = 3

/** A lazy (declared or cached) upstream with no call for this long is stopped, unless the manifest says otherwise. */
export const DEFAULT_IDLE_MS = 10 * 60_000

/** How a connector's upstream is started: the manifest's mode, and what its supervisor is told. */
export function activationOf(mcp: McpServerSpec): { mode: EffectiveActivation; activation: Activation } {
  const mode = effectiveActivation(mcp)
  if (mode === 'eager') return { mode, activation: { kind: 'eager' } }
  return { mode, activation: { kind: 'lazy', idleMs: (mcp.idleTimeoutSeconds ?? DEFAULT_IDLE_MS / 1000) * 1000 } }
}

/** Why a table the upstream listed is committed, for the log. */
export function listedReason(why: 'started' | 'changed', mode: EffectiveActivation): string {
  if (why === 'changed') return 'upstream tools changed'
  return mode === 'eager' ? 'restart' : `${mode} start: the upstream's table differs from the published one`
}

/** The manifest's declared tools compared with the upstream's (the upstream's table is the truth either way). */
export function declaredCheckOf(
  mcp: McpServerSpec | undefined,
  listed: UpstreamTool[],
): { checkedAt: string; differences: ToolDifference[] } | undefined {
  const declared = declaredToolsOf(mcp) as UpstreamTool[] | undefined
  if (!declared) return undefined
  return { checkedAt: new Date().toISOString(), differences: compareToolTables(declared, listed) }
}
