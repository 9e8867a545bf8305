import type { RequestOf, ResponseOf } from '../../protocol/message.js'
import type { sessionPrepareMessage } from '../../protocol/session-prepare.js'
import type { DaemonContext } from '../context.js'

export async function handleSessionPrepare(ctx: DaemonContext, req: RequestOf<typeof sessionPrepareMessage>): Promise<ResponseOf<typeof sessionPrepareMessage>> {
  const token = await ctx.sessions.issue(req.workspace, req.session, req.provider)
  return { token, url: ctx.mcpUrl(), skillRoots: ctx.skillRoots().map(({ connector, dir, skills }) => ({ connector, dir, skills })) }
}
