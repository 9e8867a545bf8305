import path from 'node:path'
import { effectiveActivation } from '../manifest/schema.js'
import type { InterfaceStatus } from '../control-protocol/connector-state.js'
import type { ToolDifference } from '../registry/declared-tools.js'
import type { UpstreamSupervisor } from '../upstream/upstream-supervisor.js'
import { freeze, type ConnectorSnapshot } from './connector-snapshot.js'
import type { DesiredConnector } from './desired-connector.js'
import type { FailedChange } from './failed-change.js'
import type { ServedTable } from './served-table.js'

/** What an active connector's runtime knows at one moment, for its snapshot. */
export interface RuntimeView {
  key: string
  desired: DesiredConnector
  /** The last commit: its generation, the size of its table, what its filter hid. */
  served: Pick<ServedTable, 'generation' | 'tools' | 'bytes' | 'hidden' | 'unmatched'>
  status: InterfaceStatus
  reason?: string | undefined
  failedChange?: FailedChange | undefined
  /** The upstream shown: the one that serves while it does, else the one being started. */
  upstream?: UpstreamSupervisor | undefined
  cli?: ConnectorSnapshot['cli'] | undefined
  declaredCheck?: (ConnectorSnapshot['declaredCheck'] & { differences: ToolDifference[] }) | undefined
  lastChange: string
}

/** An active connector's snapshot, frozen. */
export function runtimeSnapshot(v: RuntimeView): ConnectorSnapshot {
  const { desired, upstream, served } = v
  const filter = desired.toolFilter
  const unmatched = served.unmatched.length ? { unmatched: [...served.unmatched] } : {}
  const { manifest, root, skills } = desired.release
  const mcp = manifest.mcp
    ? {
        mcp: {
          status: v.status,
          activation: effectiveActivation(manifest.mcp),
          ...(v.reason ? { reason: v.reason } : {}),
          ...(v.failedChange ? { failedChange: v.failedChange } : {}),
        },
      }
    : {}
  return freeze({
    key: v.key,
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    digest: desired.digest,
    releaseRoot: root,
    ...(manifest.skills ? { skillsDir: path.join(root, manifest.skills) } : {}),
    skills,
    active: true,
    generation: served.generation,
    tools: served.tools,
    toolBytes: served.bytes,
    ...(served.hidden ? { hiddenTools: served.hidden } : {}),
    ...(filter ? { toolFilter: { ...filter, ...unmatched } } : {}),
    ...mcp,
    ...(v.cli ? { cli: v.cli } : {}),
    ...(upstream
      ? {
          upstream: {
            state: upstream.state,
            starts: upstream.starts,
            restarts: upstream.restarts,
            ...(upstream.pid !== undefined ? { pid: upstream.pid } : {}),
            ...(upstream.protocolVersion ? { protocolVersion: upstream.protocolVersion } : {}),
            ...(upstream.nextRetryAt ? { nextRetryAt: upstream.nextRetryAt } : {}),
            ...(upstream.lastError ? { lastError: upstream.lastError } : {}),
            ...(upstream.spec.kind === 'stdio' ? { command: upstream.spec.command } : {}),
          },
        }
      : {}),
    ...(desired.settings && Object.keys(desired.settings).length ? { settings: desired.settings } : {}),
    ...(v.declaredCheck ? { declaredCheck: v.declaredCheck } : {}),
    lastChange: v.lastChange,
  })
}
