import path from 'node:path'
import type { ToolDifference } from '../registry/declared-tools.js'
import type { InterfaceStatus, ToolFilterView } from '../control-protocol/connector-state.js'
import type { SkillSummary } from '../skills/skill-file.js'
import type { FailedChange } from './failed-change.js'

/**
 * Everything the daemon knows about one installed connector at one moment,
 * frozen. It is the single source of `connector available`, `daemon
 * status`, the doctor and the sessions' Skill roots: each is a pure
 * function of the snapshots (build-available.ts, daemon/control/, doctor/).
 */
export interface ConnectorSnapshot {
  readonly key: string
  readonly name: string
  readonly version: string
  readonly description: string
  readonly digest?: string
  /** The installed release's real root; absent when it cannot be read. */
  readonly releaseRoot?: string
  /** The release's Skills directory (inside the root) and its Skills. */
  readonly skillsDir?: string
  readonly skills: readonly SkillSummary[]
  /** Whether the connector is installed and its credentials are all stored. */
  readonly active: boolean
  /** The committed route generation (0: none), and how many tools it serves. */
  readonly generation: number
  readonly tools: number
  /** Bytes of the tools' definitions as clients get them (what they cost a model's context). */
  readonly toolBytes: number
  /** Tools of the committed table its filter hides; absent: none. */
  readonly hiddenTools?: number
  /** The tool filter in effect, when one is; `unmatched` once a table is known. */
  readonly toolFilter?: ToolFilterView
  /** `tutti connector disable`: inactive by the user's choice. */
  readonly disabled?: true
  readonly mcp?: {
    readonly status: InterfaceStatus
    readonly reason?: string
    readonly activation: 'eager' | 'lazy' | 'cached'
    /** Ready, but a change failed to start: the previous release serves on (reconcile/failed-change.ts). */
    readonly failedChange?: FailedChange
  }
  readonly cli?: {
    readonly status: InterfaceStatus
    readonly reason?: string
    /** The generation of the published shim; 0: none. */
    readonly shimGeneration: number
  }
  readonly upstream?: {
    readonly state: 'running' | 'stopped' | 'restarting'
    readonly pid?: number
    /** The MCP revision its running link speaks. */
    readonly protocolVersion?: string
    readonly starts: number
    readonly restarts: number
    readonly nextRetryAt?: string
    readonly lastError?: string
    /** The stdio command as resolved at install or connect. */
    readonly command?: string
  }
  readonly settings?: Readonly<Record<string, string>>
  readonly declaredCheck?: { readonly checkedAt: string; readonly differences: readonly ToolDifference[] }
  readonly lastChange: string
}

/** The status the connector as a whole is reported with: its MCP interface's, else its CLI's. */
export function overallStatus(s: ConnectorSnapshot): InterfaceStatus {
  return s.mcp?.status ?? s.cli?.status ?? (s.active ? 'ready' : 'needs-auth')
}

/** The reason shown for the connector as a whole. */
export function overallReason(s: ConnectorSnapshot): string | undefined {
  return s.mcp?.reason ?? s.cli?.reason
}

export interface SkillRootOf {
  connector: string
  /** The Skills directory inside the installed release. */
  dir: string
  /** The real root of that release: links made for a session are checked against it. */
  releaseRoot: string
  skills: Array<{ name: string; dir: string }>
}

/** Skill roots of the connectors an agent can use: active, with Skills. */
export function skillRootsOf(snapshots: readonly ConnectorSnapshot[]): SkillRootOf[] {
  return snapshots
    .filter((s) => s.active && s.releaseRoot && s.skillsDir && s.skills.length)
    .map((s) => ({
      connector: s.key,
      dir: s.skillsDir!,
      releaseRoot: s.releaseRoot!,
      skills: s.skills.map((k) => ({ name: k.name, dir: path.join(s.skillsDir!, k.dir) })),
    }))
}

export function freeze(s: ConnectorSnapshot): ConnectorSnapshot {
  return Object.freeze(s)
}
