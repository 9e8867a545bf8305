import { HEADER, MODERN_REVISION, toolsListenRequest } from '../mcp-wire.js'
import { PRODUCT_VERSION } from '../version.js'
import type { DaemonHttp } from './daemon-http.js'
import type { DaemonLink, Link } from './daemon-link.js'
import { ListenRelay } from './listen-relay.js'

/** What a 2025 client that initialized is sent when the tools changed (it has no listen stream of its own). */
export const LIST_CHANGED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
const WATCH_ID = 'tutti-bridge-watch'

/**
 * The bridge's own subscription: what tells it (and through it a 2025 client) that the tools changed, and that the
 * daemon went.
 */
const WATCH_REQUEST = Buffer.from(
  toolsListenRequest(WATCH_ID, { name: 'tutti-session-bridge', version: PRODUCT_VERSION }),
)

/**
 * The bridge's listen stream at the daemon: `changed` when the tools changed, or when the stream was opened again
 * (a change may have gone unseen meanwhile); `lost` when the daemon went.
 */
export function toolsWatch(
  http: DaemonHttp,
  link: DaemonLink,
  on: { changed(): void; lost(link: Link): void },
): ListenRelay {
  return new ListenRelay({
    bytes: WATCH_REQUEST,
    id: WATCH_ID,
    headers: { [HEADER.protocolVersion]: MODERN_REVISION, [HEADER.method]: 'subscriptions/listen' },
    http,
    link,
    onMessage: (payload) => {
      if (payload.includes('"notifications/tools/list_changed"')) on.changed()
    },
    onReopened: () => on.changed(),
    onLost: (lost) => on.lost(lost),
  })
}
