import { buildAvailable } from '../../reconcile/build-available.js'
import type { AvailableResult } from '../../control-protocol/available.js'
import type { DaemonContext } from '../context.js'

/** The public command never waits long on a slow upstream: what is still building is reported as starting. */
const AVAILABLE_WAIT_MS = 5_000

export async function handleAvailable(ctx: DaemonContext): Promise<AvailableResult> {
  // answer from reconciled state, not from the moment a fresh daemon came up
  await Promise.race([ctx.initialReconcile(), new Promise((r) => setTimeout(r, AVAILABLE_WAIT_MS).unref())])
  // the public view never shows where the state lives, nor a secret the daemon knows
  const scrub = (text: string): string => ctx.log.redactor.redactString(text).split(ctx.paths.root).join('<state>')
  return buildAvailable(ctx.reconciler.snapshots(), scrub)
}
