import type { RequestOf, ResponseOf } from '../../protocol/message.js'
import type { sessionRevokeMessage } from '../../protocol/session-revoke.js'
import type { DaemonContext } from '../context.js'

export async function handleSessionRevoke(
  ctx: DaemonContext,
  req: RequestOf<typeof sessionRevokeMessage>,
): Promise<ResponseOf<typeof sessionRevokeMessage>> {
  return { revoked: await ctx.sessions.revoke(req) }
}
