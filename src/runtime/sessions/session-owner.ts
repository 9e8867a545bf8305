import { provenGone, thisProcess } from '../proc/pid.js'
import type { SessionOwner } from './session-record.js'

/**
 * This process as a session's owner, where the OS tells its start time
 * (Linux): a pid alone may be reused, so elsewhere there is no owner and
 * the token lives by its TTL.
 */
export function thisOwner(): SessionOwner | undefined {
  const me = thisProcess()
  if (!me.startTicks) return undefined
  return { pid: me.pid, start: me.startTicks, ...(me.pidNamespace ? { pidNamespace: me.pidNamespace } : {}) }
}

let ownNamespace: string | undefined | null = null

/** Whether this process could ever prove `owner` gone: its pid is of our pid namespace. */
export function ownerCheckable(owner: SessionOwner): boolean {
  if (ownNamespace === null) ownNamespace = thisProcess().pidNamespace
  return owner.pidNamespace === ownNamespace
}

/** Proven gone: its pid is dead, or names a process that started at another time (proc/pid.ts). Never signalled. */
export function ownerGone(owner: SessionOwner): boolean {
  return provenGone({ pid: owner.pid, startTicks: owner.start, pidNamespace: owner.pidNamespace })
}
