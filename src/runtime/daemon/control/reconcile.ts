import type { ResponseOf, RequestOf } from '../../protocol/message.js'
import type { reconcileMessage } from '../../protocol/reconcile.js'
import type { DaemonContext } from '../context.js'

export async function handleReconcile(ctx: DaemonContext, req: RequestOf<typeof reconcileMessage>): Promise<ResponseOf<typeof reconcileMessage>> {
  return { connectors: await ctx.reconciler.reconcile(req.keys) }
}
