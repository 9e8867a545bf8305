import { Client } from '@modelcontextprotocol/client'
import { UPSTREAM_CLIENT_INFO } from '../names.js'
import { type CallRelays, UPSTREAM_CLIENT_CAPABILITIES } from './call-relays.js'

/** Where what an upstream says unasked goes; set up before its connection exists (one client per attempt). */
export class UpstreamNews {
  /** Any of its lists changed (tools, prompts, resources). */
  readonly changed = new Set<() => void>()
  /** A resource the daemon subscribed to changed, by the upstream's URI. */
  readonly updated = new Set<(uri: string) => void>()

  listsChanged(): void {
    for (const listener of this.changed) listener()
  }

  clear(): void {
    this.changed.clear()
    this.updated.clear()
  }
}

/**
 * tutti's client of one upstream, with what it declares and where what
 * the upstream sends goes: its requests and log messages to the calls they
 * serve (call-relays.ts), its list changes and resource updates to `news`.
 * A 2026-07-28 link hears the last two on its subscriptions/listen stream
 * (upstream-listen.ts), which the SDK hands to the same handlers.
 */
export function upstreamClient(
  relays: CallRelays,
  news: UpstreamNews,
  options: ConstructorParameters<typeof Client>[1],
): Client {
  const client = new Client({ ...UPSTREAM_CLIENT_INFO }, { capabilities: UPSTREAM_CLIENT_CAPABILITIES, ...options })
  relays.install(client)
  // any of its lists changed: the whole table is listed again, as one new generation
  const changed = () => news.listsChanged()
  client.setNotificationHandler('notifications/tools/list_changed', changed)
  client.setNotificationHandler('notifications/prompts/list_changed', changed)
  client.setNotificationHandler('notifications/resources/list_changed', changed)
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    for (const listener of news.updated) listener(n.params.uri)
  })
  return client
}
