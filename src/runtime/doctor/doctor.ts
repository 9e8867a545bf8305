import { randomBytes } from 'node:crypto'
import { ensureDaemon } from '../client/ensure-daemon.js'
import { LEGACY_REVISION, MODERN_REVISION } from '../mcp-wire.js'
import { SERVER_NAME } from '../names.js'
import type { StatePaths } from '../paths.js'
import type { doctorSnapshotMessage } from '../control-protocol/doctor.js'
import type { sessionPrepareMessage } from '../control-protocol/session-prepare.js'
import type { sessionRevokeMessage } from '../control-protocol/session-revoke.js'
import { checkAvailable, checkHealth, checkDeclared, checkMcpList, checkShims, checkSkills } from './facade-checks.js'
import type { Finding } from './finding.js'
import { listToolsInEra, observeShims, observeSkillRoots } from './observe.js'

export interface DoctorReport {
  ok: boolean
  findings: Finding[]
  checked: { connectors: number; tools: number; shims: number; skillRoots: number; eras: string[] }
}

const DOCTOR_WORKSPACE = 'tutti-doctor'

/**
 * `tutti daemon doctor` (seed 004, facade-parity): every facade is compared
 * with the registry: `connector available`, MCP tools/list in each protocol
 * era (through a short-lived session of its own), the shims on disk, the
 * Skill roots, and the declared tool tables of running lazy connectors.
 */
export async function runDoctor(paths: StatePaths): Promise<DoctorReport> {
  const daemon = await ensureDaemon(paths)
  const snapshot = await daemon.call<typeof doctorSnapshotMessage>('doctor-snapshot', {})
  const session = `doctor-${randomBytes(6).toString('hex')}`
  const issued = await daemon.call<typeof sessionPrepareMessage>('session-prepare', {
    provider: 'tutti-agent',
    workspace: DOCTOR_WORKSPACE,
    session,
  })
  let modern: Awaited<ReturnType<typeof listToolsInEra>>
  let legacy: typeof modern
  try {
    const server = {
      name: SERVER_NAME as typeof SERVER_NAME,
      type: 'http' as const,
      url: issued.url,
      headers: { Authorization: `Bearer ${issued.token}` },
    }
    ;[modern, legacy] = await Promise.all([listToolsInEra(server, 'modern'), listToolsInEra(server, 'legacy')])
  } finally {
    await daemon
      .call<typeof sessionRevokeMessage>('session-revoke', { session, workspace: DOCTOR_WORKSPACE })
      // the listing is the report either way; a failed revoke leaves only the doctor's own session
      .catch(() => undefined)
  }
  const shims = await observeShims(paths)
  const roots = await observeSkillRoots(snapshot.connectors)
  const findings = [
    ...checkHealth(snapshot.connectors),
    ...checkAvailable(snapshot.available, snapshot.connectors, snapshot.tools),
    ...checkMcpList('mcp-2026-07-28', modern, snapshot.tools),
    ...checkMcpList('mcp-2025-06-18', legacy, snapshot.tools),
    ...checkShims(snapshot.connectors, shims),
    ...checkSkills(snapshot.connectors, roots),
    ...checkDeclared(snapshot.connectors),
  ]
  return {
    ok: findings.length === 0,
    findings,
    checked: {
      connectors: snapshot.connectors.length,
      tools: snapshot.tools.length,
      shims: shims.length,
      skillRoots: roots.length,
      eras: [MODERN_REVISION, LEGACY_REVISION],
    },
  }
}
