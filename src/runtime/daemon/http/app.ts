import { H3 } from 'h3'
import type { DaemonContext } from '../context.js'
import { handleControl } from '../control/router.js'
import { jsonResponse } from './json-response.js'
import { checkLoopback } from './loopback-guard.js'
import { closeIfBodyUnread } from './read-body.js'

export interface AppMounts {
  /** Extra routes (the MCP endpoint) mounted by their own modules. */
  mount?: (app: H3) => void
  /** Called at the start and the end of every request (idle tracking). */
  activity?: (delta: 1 | -1) => void
}

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
      return jsonResponse(500, { error: { code: 'INTERNAL', message: 'internal error' } })
    },
  })
  app.use((event) => {
    const failure = checkLoopback(event.req.headers)
    if (failure) return jsonResponse(failure.status, { error: { code: 'FORBIDDEN', message: failure.reason } })
  })
  app.post('/control/:name', (event) => handleControl(ctx, controlToken, event.context.params?.name ?? '', event.req))
  mounts.mount?.(app)
  app.all('/**', () => jsonResponse(404, { error: { code: 'NOT_FOUND', message: 'not found' } }))
  return app
}
