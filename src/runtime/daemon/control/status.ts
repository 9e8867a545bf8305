import type { ResponseOf } from '../../control-protocol/message.js'
import type { statusMessage } from '../../control-protocol/status.js'
import { CONTROL_PROTOCOL_VERSION } from '../../control-protocol/version.js'
import { PRODUCT_VERSION } from '../../version.js'
import { toConnectorState } from '../../reconcile/snapshot-views.js'
import type { DaemonContext } from '../context.js'

export async function handleStatus(ctx: DaemonContext): Promise<ResponseOf<typeof statusMessage>> {
  return {
    pid: process.pid,
    port: ctx.port(),
    productVersion: PRODUCT_VERSION,
    protocolVersion: CONTROL_PROTOCOL_VERSION,
    startedAt: ctx.startedAt.toISOString(),
    uptimeMs: Date.now() - ctx.startedAt.getTime(),
    sessions: ctx.sessions.size,
    sessionActivity: ctx.sessions.activityView(),
    connectors: ctx.reconciler.snapshots().map(toConnectorState),
  }
}
