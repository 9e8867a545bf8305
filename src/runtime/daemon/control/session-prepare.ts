import type { RequestOf, ResponseOf } from '../../control-protocol/message.js'
import type { sessionPrepareMessage } from '../../control-protocol/session-prepare.js'
import { ErrorCodes, TuttiError } from '../../errors.js'
import { TOKEN_ENV } from '../../names.js'
import { SessionView, type ViewLayer } from '../../sessions/session-view.js'
import { checkViewLayers, type KnownConnector } from '../../sessions/view-check.js'
import { viewContext } from '../../sessions/view-context.js'
import { ownerCheckable } from '../../sessions/session-owner.js'
import { expiryOf } from '../../sessions/session-ttl.js'
import type { DaemonContext } from '../context.js'

/** A prepare waits this long for the start-up reconcile: the view's names are checked against what it finds. */
const PREPARE_WAITS_FOR_RECONCILE_MS = 5_000

/** Every installed connector, with the names of its tools (those its filter hides too) where a table is known. */
function knownConnectors(ctx: DaemonContext): Map<string, KnownConnector> {
  const known = new Map<string, KnownConnector>()
  for (const s of ctx.reconciler.snapshots()) {
    const route = ctx.registry.route(s.key)
    const tools = route && [...route.tools, ...(route.hidden ?? [])]
    const names = tools?.map((t) => ({ upstream: t.upstreamName, published: t.localName }))
    known.set(s.key, names && s.generation > 0 ? { tools: names } : {})
  }
  return known
}

/** The view's layers: the parent session's (when prepared inside one), then this preparation's own. */
function layersOf(ctx: DaemonContext, req: RequestOf<typeof sessionPrepareMessage>): ViewLayer[] {
  const own = req.view ?? []
  if (req.parentToken === undefined) return own
  const parent = ctx.sessions.verify(req.parentToken)
  if (!parent)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `${TOKEN_ENV} in this environment is not a live session token (revoked, expired, or of another state ` +
        `directory): a session prepared inside it could see more than it does; unset ${TOKEN_ENV} to prepare a ` +
        'session of its own',
    )
  return [...(parent.view ?? []).map((l) => ({ ...l, from: `parent session: ${l.from}` })), ...own]
}

export async function handleSessionPrepare(
  ctx: DaemonContext,
  req: RequestOf<typeof sessionPrepareMessage>,
): Promise<ResponseOf<typeof sessionPrepareMessage>> {
  const layers = layersOf(ctx, req)
  if (req.view?.length) {
    await Promise.race([
      ctx.initialReconcile(),
      new Promise((r) => setTimeout(r, PREPARE_WAITS_FOR_RECONCILE_MS).unref()),
    ])
    checkViewLayers(req.view, knownConnectors(ctx))
  }
  // ends by itself after its TTL, or with its owner (sessions/session-ttl.ts)
  const expiresAt = expiryOf(req, Date.now(), ownerCheckable)
  const token = await ctx.sessions.issue(req.workspace, req.session, req.provider, {
    ...(layers.length ? { view: layers } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(req.owner ? { owner: req.owner } : {}),
  })
  const view = SessionView.of(layers)
  const skillRoots = ctx
    .skillRoots()
    .filter((root) => view.connector(root.connector))
    .map(({ connector, dir, releaseRoot, skills }) => {
      // the names served now: a Skill's projection maps the upstream names it mentions to these
      const route = ctx.registry.route(connector)
      const tools = route?.tools.map((t) => ({ upstream: t.upstreamName, published: t.localName }))
      return tools ? { connector, dir, releaseRoot, skills, tools } : { connector, dir, releaseRoot, skills }
    })
  const seen = view.tools(ctx.registry.list())
  const binDir = view.whole ? undefined : await ctx.sessionBins.sync(req, view)
  const connectors = ctx.reconciler
    .snapshots()
    .filter((s) => s.active && view.connector(s.key))
    .map((s) => s.key)
  return {
    token,
    url: ctx.mcpUrl(),
    skillRoots,
    context: viewContext(seen),
    view: { narrowed: !view.whole, sources: view.sources, connectors },
    ...(binDir ? { binDir } : {}),
  }
}
