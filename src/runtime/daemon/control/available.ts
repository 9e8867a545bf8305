import { buildAvailable } from '../../reconcile/build-available.js'
import type { AvailableResult } from '../../control-protocol/available.js'
import type { RequestOf } from '../../control-protocol/message.js'
import type { availableMessage } from '../../control-protocol/available.js'
import { ErrorCodes, TuttiError } from '../../errors.js'
import { TOKEN_ENV } from '../../names.js'
import { viewContext } from '../../sessions/view-context.js'
import type { DaemonContext } from '../context.js'

/** The public command never waits long on a slow upstream: what is still building is reported as starting. */
const AVAILABLE_WAIT_MS = 5_000

/**
 * `connector available`, of every connector, or (asked with a session's
 * token) of what that session's view sees: its connectors, each with the
 * tools the view lets through, and what those cost the model's context.
 */
export async function handleAvailable(
  ctx: DaemonContext,
  req: RequestOf<typeof availableMessage>,
): Promise<AvailableResult> {
  // answer from reconciled state, not from the moment a fresh daemon came up
  await Promise.race([ctx.initialReconcile(), new Promise((r) => setTimeout(r, AVAILABLE_WAIT_MS).unref())])
  // the public view never shows where the state lives, nor a secret the daemon knows
  const scrub = (text: string): string => ctx.log.redactor.redactString(text).split(ctx.paths.root).join('<state>')
  if (req.token === undefined) return buildAvailable(ctx.reconciler.snapshots(), scrub)
  const session = ctx.sessions.verify(req.token)
  if (!session)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `${TOKEN_ENV} is not a live session token (revoked, expired, or of another state directory); ` +
        `unset it to see every connector`,
    )
  const view = ctx.sessions.viewOf(session.hash)
  const seen = view.tools(ctx.registry.list())
  const snapshots = ctx.reconciler
    .snapshots()
    .filter((s) => view.connector(s.key))
    .map((s) => {
      if (view.whole) return s
      const tools = seen.filter((t) => t.connector === s.key)
      // what the session's view hides counts with what the connector's filter hides
      const hiddenTools = (s.hiddenTools ?? 0) + s.tools - tools.length
      return { ...s, tools: tools.length, toolBytes: viewContext(tools).bytes, ...(hiddenTools ? { hiddenTools } : {}) }
    })
  return {
    ...buildAvailable(snapshots, scrub),
    session: { narrowed: !view.whole, context: viewContext(seen) },
  }
}
