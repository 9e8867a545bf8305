import type { ConnectorState } from '../control-protocol/connector-state.js'
import type { DoctorConnector } from '../control-protocol/doctor.js'
import { overallReason, overallStatus, type ConnectorSnapshot } from './connector-snapshot.js'

/** `daemon status` and reconcile answers: one connector's state, from its snapshot. */
export function toConnectorState(s: ConnectorSnapshot): ConnectorState {
  const state: ConnectorState = {
    key: s.key,
    version: s.version,
    status: overallStatus(s),
    generation: s.generation,
    tools: s.tools,
    lastChange: s.lastChange,
  }
  const reason = overallReason(s)
  // a ready connector has a reason only while a change of it failed and the previous release serves on
  if (reason) state.reason = reason
  // disabled is the user's choice, not an error
  if (reason && state.status !== 'ready' && !s.disabled) state.error = reason
  if (s.disabled) state.disabled = true
  if (s.hiddenTools) state.hiddenTools = s.hiddenTools
  if (s.toolFilter) state.toolFilter = s.toolFilter
  if (s.mcp?.failedChange) state.failedChange = { ...s.mcp.failedChange }
  if (s.mcp) state.activation = s.mcp.activation
  state.upstream = s.upstream?.state ?? 'none'
  if (s.upstream) {
    if (s.upstream.pid !== undefined) state.pid = s.upstream.pid
    if (s.upstream.protocolVersion) state.protocolVersion = s.upstream.protocolVersion
    if (s.mcp && s.mcp.activation !== 'eager') state.starts = s.upstream.starts
    state.restarts = s.upstream.restarts
    if (s.upstream.nextRetryAt) state.nextRetryAt = s.upstream.nextRetryAt
    if (s.upstream.lastError) state.lastError = s.upstream.lastError
    if (s.upstream.command) state.command = s.upstream.command
  } else if (s.active) state.restarts = 0
  if (s.settings) state.settings = { ...s.settings }
  if (s.cli) {
    state.cli = s.cli.status
    if (s.cli.reason && s.cli.status !== 'ready') state.cliReason = s.cli.reason
  }
  return state
}

/** What the doctor checks each connector against. */
export function toDoctorConnector(s: ConnectorSnapshot): DoctorConnector {
  const status = overallStatus(s)
  const reason = overallReason(s)
  const view: DoctorConnector = {
    key: s.key,
    status,
    active: s.active,
    generation: s.generation,
    hasMcp: s.active && !!s.mcp,
    hasCli: s.active && !!s.cli,
    shimGeneration: s.cli?.shimGeneration ?? 0,
    upstreamRunning: s.upstream?.state === 'running',
    skills: s.active ? s.skills.map((k) => k.name) : [],
  }
  if (status !== 'ready' && reason) view.reason = reason
  if (s.digest && s.active) view.digest = s.digest
  if (s.mcp && s.active) view.activation = s.mcp.activation
  if (s.skillsDir && s.active) view.skillsDir = s.skillsDir
  if (s.declaredCheck)
    view.declaredCheck = { checkedAt: s.declaredCheck.checkedAt, differences: [...s.declaredCheck.differences] }
  return view
}
