import type { RequestOf, ResponseOf } from '../../control-protocol/message.js'
import type { sessionRevokeMessage } from '../../control-protocol/session-revoke.js'
import type { DaemonContext } from '../context.js'

export async function handleSessionRevoke(
  ctx: DaemonContext,
  req: RequestOf<typeof sessionRevokeMessage>,
): Promise<ResponseOf<typeof sessionRevokeMessage>> {
  return { revoked: await ctx.sessions.revoke(req) }
}
