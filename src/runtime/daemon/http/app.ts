import { H3 } from 'h3'
import { ErrorCodes } from '../../errors.js'
import { errorResponse } from '../../http/error-response.js'
import { closeIfBodyUnread } from '../../http/read-body.js'
import type { DaemonContext } from '../context.js'
import { handleControl } from '../control/router.js'
import { checkLoopback } from './loopback-guard.js'

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
  return app
}
