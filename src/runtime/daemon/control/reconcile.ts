import type { ResponseOf, RequestOf } from '../../control-protocol/message.js'
import type { reconcileMessage } from '../../control-protocol/reconcile.js'
import { toConnectorState } from '../../reconcile/snapshot-views.js'
import type { DaemonContext } from '../context.js'

export async function handleReconcile(
  ctx: DaemonContext,
  req: RequestOf<typeof reconcileMessage>,
): Promise<ResponseOf<typeof reconcileMessage>> {
  const work = ctx.reconciler.reconcile(req.keys)
  if (req.waitMs === undefined) return { connectors: await work }
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, req.waitMs)
  })
  // a restart that follows a quick exit counts: wait for its outcome too, within the same bound
  const outcome = work.then(() => ctx.reconciler.settled(req.keys ?? ctx.reconciler.snapshots().map((c) => c.key)))
  // after the deadline nobody awaits it: a late failure is the reconciler's to log, not an unhandled rejection
  outcome.catch(() => undefined)
  await Promise.race([outcome, deadline])
  clearTimeout(timer)
  const keys = req.keys ? new Set(req.keys) : undefined
  return {
    connectors: ctx.reconciler
      .snapshots()
      .filter((c) => !keys || keys.has(c.key))
      .map(toConnectorState),
  }
}
