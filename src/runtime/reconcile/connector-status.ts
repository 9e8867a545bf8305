import type { InterfaceStatus } from '../control-protocol/connector-state.js'
import type { FailedChange } from './failed-change.js'

/** One connector's MCP status as its runtime last set it, and the waits for its outcome. */
export class ConnectorStatus {
  status: InterfaceStatus = 'starting'
  reason?: string
  /** Set while ready only because the previous generation serves on after a change failed to start. */
  failedChange?: FailedChange
  lastChange = new Date().toISOString()
  private readonly listeners = new Set<() => void>()

  set(status: InterfaceStatus, reason?: string, failedChange?: FailedChange): void {
    this.status = status
    this.reason = reason
    this.failedChange = failedChange
    this.lastChange = new Date().toISOString()
    for (const listener of this.listeners) listener()
  }

  /** Resolves once the status is anything but `starting`, or at the next change once `abandoned` holds. */
  settled(abandoned: () => boolean): Promise<void> {
    if (this.status !== 'starting') return Promise.resolve()
    return new Promise((resolve) => {
      const listener = (): void => {
        if (this.status === 'starting' && !abandoned()) return
        this.listeners.delete(listener)
        resolve()
      }
      this.listeners.add(listener)
    })
  }
}
