import path from 'node:path'
import { effectiveActivation } from '../manifest/schema.js'
import type { InterfaceStatus } from '../control-protocol/connector-state.js'
import type { ListedConnector } from '../store/connector-store.js'
import { freeze, type ConnectorSnapshot } from './connector-snapshot.js'
import { toolFilterOf } from './tool-filter-of.js'

/** An installed connector that is not active: every interface it has shares the status and the reason. */
export function inactiveSnapshot(
  entry: ListedConnector,
  status: InterfaceStatus,
  reason: string,
  generation: number,
): ConnectorSnapshot {
  const release = entry.release
  const m = release?.manifest
  const { view } = toolFilterOf(m, entry.installed.toolFilter)
  return freeze({
    key: entry.installed.key,
    name: m?.name ?? entry.installed.name,
    version: m?.version ?? entry.installed.version,
    description: m?.description ?? '',
    digest: entry.installed.digest,
    ...(release ? { releaseRoot: release.root } : {}),
    ...(release && m?.skills ? { skillsDir: path.join(release.root, m.skills) } : {}),
    skills: release?.skills ?? [],
    active: false,
    generation,
    tools: 0,
    toolBytes: 0,
    ...(view ? { toolFilter: view } : {}),
    ...(status === 'disabled' ? { disabled: true as const } : {}),
    ...(m?.mcp || !release
      ? { mcp: { status, reason, activation: m?.mcp ? effectiveActivation(m.mcp) : 'eager' } }
      : {}),
    ...(m?.cli ? { cli: { status, reason, shimGeneration: 0 } } : {}),
    lastChange: new Date().toISOString(),
  })
}
