import type { RequestOf, ResponseOf } from '../../control-protocol/message.js'
import type { toolTableMessage } from '../../control-protocol/tool-table.js'
import type { DaemonContext } from '../context.js'

export async function handleToolTable(
  ctx: DaemonContext,
  req: RequestOf<typeof toolTableMessage>,
): Promise<ResponseOf<typeof toolTableMessage>> {
  // a daemon just started answers from the table its start-up reconcile published
  await ctx.initialReconcile()
  return { key: req.key, ...(await ctx.reconciler.toolTable(req.key)) }
}
