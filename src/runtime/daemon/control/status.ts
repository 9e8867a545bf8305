import type { ResponseOf } from '../../control-protocol/message.js'
import type { statusMessage } from '../../control-protocol/status.js'
import { CONTROL_PROTOCOL_VERSION } from '../../control-protocol/version.js'
import { PRODUCT_VERSION } from '../../version.js'
import { toConnectorState } from '../../reconcile/snapshot-views.js'
import { viewContext } from '../../sessions/view-context.js'
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
    // each session's view and what its tools cost: the second shares the filtered list among equal views
    sessionActivity: ctx.sessions.activityView((_hash, view) => ({
      ...(view.whole ? {} : { view: view.sources }),
      context: viewContext(view.tools(ctx.registry.list())),
    })),
    connectors: ctx.reconciler.snapshots().map(toConnectorState),
  }
}
