import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { H3 } from 'h3'
import { ErrorCodes } from '../../errors.js'
import { errorResponse } from '../../http-surface/error-response.js'
import { nodeHeaders, type HeaderLookup } from '../../http-surface/header-lookup.js'
import { closeIfBodyUnread } from '../../http-surface/read-body.js'
import { MCP_PATH } from '../../mcpserver/mcp-endpoint.js'
import type { DaemonContext } from '../context.js'
import { handleControl } from '../control/router.js'
import { checkLoopback } from './loopback-guard.js'

/** The MCP endpoint's hot path on node's own request (ConnectorMcpEndpoint.serveNode). */
export type NodeFront = (req: IncomingMessage, res: ServerResponse, headers: HeaderLookup, toH3: () => void) => boolean

export interface AppMounts {
  /** Extra routes (the MCP endpoint) mounted by their own modules. */
  mount?: (app: H3) => void
  /** Called at the start and the end of every request (idle tracking). */
  activity?: (delta: 1 | -1) => void
  /** Offered every POST of MCP_PATH that passes the loopback guard, before the app (withNodeFront). */
  front?: NodeFront
}

const MOUNTS = new WeakMap<H3, AppMounts>()

/**
 * The daemon's single HTTP surface on 127.0.0.1: the control API and the
 * `connector` MCP endpoint. The loopback guard runs before any route.
 */
export function createDaemonApp(ctx: DaemonContext, controlToken: string, mounts: AppMounts = {}): H3 {
  const app = new H3({
    onRequest: () => mounts.activity?.(1),
    onResponse: (_response, event) => {
      closeIfBodyUnread(event.runtime?.node)
      mounts.activity?.(-1)
    },
    onError: (error) => {
      ctx.log.error('http handler failed', { error })
      return errorResponse(500, ErrorCodes.INTERNAL, 'internal error')
    },
  })
  app.use((event) => {
    const failure = checkLoopback(event.req.headers)
    if (failure) return errorResponse(failure.status, ErrorCodes.FORBIDDEN, failure.reason)
  })
  app.post('/control/:name', (event) => handleControl(ctx, controlToken, event.context.params?.name ?? '', event.req))
  mounts.mount?.(app)
  app.all('/**', () => errorResponse(404, ErrorCodes.NOT_FOUND, 'not found'))
  MOUNTS.set(app, mounts)
  return app
}

/**
 * The daemon's request listener: a POST of the MCP path whose headers pass
 * the loopback guard (the function the app's own middleware runs, on the
 * same values) goes to the node front first; everything else, and whatever
 * the front does not take or hands back, to the app (`h3`, its node
 * handler). A request with a repeated header always goes to the app.
 */
export function withNodeFront(h3: RequestListener, app: H3): RequestListener {
  const { front, activity } = MOUNTS.get(app) ?? {}
  if (!front) return h3
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== MCP_PATH) return void h3(req, res)
    const headers = nodeHeaders(req)
    // refused or unusual: the app answers, as it always has
    if (!headers || checkLoopback(headers)) return void h3(req, res)
    activity?.(1)
    let counted = true
    const uncount = (): void => {
      if (!counted) return
      counted = false
      activity?.(-1)
    }
    // the app counts what it serves itself
    const toH3 = (): void => {
      uncount()
      void h3(req, res)
    }
    if (!front(req, res, headers, toH3)) return toH3()
    res.once('close', uncount)
  }
}
