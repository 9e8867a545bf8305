import type { RequestOf, ResponseOf } from '../../control-protocol/message.js'
import type { sessionPrepareMessage } from '../../control-protocol/session-prepare.js'
import { ownerCheckable } from '../../sessions/session-owner.js'
import { expiryOf } from '../../sessions/session-ttl.js'
import type { DaemonContext } from '../context.js'

export async function handleSessionPrepare(
  ctx: DaemonContext,
  req: RequestOf<typeof sessionPrepareMessage>,
): Promise<ResponseOf<typeof sessionPrepareMessage>> {
  // ends by itself after its TTL, or with its owner (sessions/session-ttl.ts)
  const expiresAt = expiryOf(req, Date.now(), ownerCheckable)
  const token = await ctx.sessions.issue(req.workspace, req.session, req.provider, {
    ...(expiresAt ? { expiresAt } : {}),
    ...(req.owner ? { owner: req.owner } : {}),
  })
  const skillRoots = ctx.skillRoots().map(({ connector, dir, releaseRoot, skills }) => {
    // the names served now: a Skill's projection maps the upstream names it mentions to these
    const route = ctx.registry.route(connector)
    const tools = route?.tools.map((t) => ({ upstream: t.upstreamName, published: t.localName }))
    return tools ? { connector, dir, releaseRoot, skills, tools } : { connector, dir, releaseRoot, skills }
  })
  return { token, url: ctx.mcpUrl(), skillRoots }
}
