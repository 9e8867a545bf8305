import type { DaemonClient } from '../client/daemon-client.js'
import { ensureDaemon, findDaemon } from '../client/ensure-daemon.js'
import type { StatePaths } from '../paths.js'
import type { sessionPrepareMessage } from '../control-protocol/session-prepare.js'
import type { sessionRevokeMessage } from '../control-protocol/session-revoke.js'
import type { ViewLayer } from '../sessions/session-view.js'
import { thisOwner } from '../sessions/session-owner.js'

/** Where the bridge's session reaches the connector server, and with which token (held in memory only). */
export interface Link {
  readonly port: number
  readonly path: string
  readonly token: string
  /** The control client of the daemon that minted the token. */
  readonly daemon: DaemonClient
}

export interface BridgeIdentity {
  workspace: string
  session: string
  /** The bridge's view (flags, the workspace's project file): every token it takes carries it. */
  view?: ViewLayer[]
  /** The session the bridge was started in, whose view it narrows. */
  parentToken?: string
}

/**
 * The bridge's one session at the daemon. A link that stops working (the
 * daemon refused a connection, answered 401, or its listen stream ended) is
 * dropped; the next `ready()` mints a new token, at the daemon running then
 * (started if there is none). Re-issuing the same workspace + session
 * revokes the previous token at once, so the bridge never holds two.
 */
export class DaemonLink {
  private current?: Link
  private pending?: Promise<Link>
  private readonly linked = new Set<(link: Link) => void>()

  constructor(
    private readonly paths: StatePaths,
    private readonly identity: BridgeIdentity,
  ) {}

  get link(): Link | undefined {
    return this.current
  }

  /** The link, or a new one: the daemon is started if none runs. */
  ready(): Promise<Link> {
    return this.current ? Promise.resolve(this.current) : this.establish(() => ensureDaemon(this.paths))
  }

  /**
   * A link only to a daemon that already runs (after a loss: a stopped daemon stays stopped until something needs it).
   */
  async attach(): Promise<Link | undefined> {
    if (this.current) return this.current
    if (this.pending) return this.pending
    const daemon = await findDaemon(this.paths)
    return daemon ? this.establish(async () => daemon) : undefined
  }

  /** `link` no longer works; a later one stays. */
  drop(link: Link): void {
    if (this.current === link) this.current = undefined
  }

  /** Called with every new link (the first, and each after a loss); returns how to stop. */
  onLinked(listener: (link: Link) => void): () => void {
    this.linked.add(listener)
    return () => this.linked.delete(listener)
  }

  /**
   * At the bridge's end: revoke its token at the daemon that runs. With none
   * running there is nothing to ask: the token never left this process,
   * and a later daemon honours only what a client presents.
   */
  async revoke(): Promise<void> {
    this.current = undefined
    const daemon = await findDaemon(this.paths)
    await daemon?.call<typeof sessionRevokeMessage>('session-revoke', {
      workspace: this.identity.workspace,
      session: this.identity.session,
    })
  }

  private establish(daemon: () => Promise<DaemonClient>): Promise<Link> {
    this.pending ??= (async () => {
      try {
        const client = await daemon()
        const { workspace, session, view, parentToken } = this.identity
        // the token ends with this bridge, even one killed with -9 (sessions/session-owner.ts)
        const owner = thisOwner()
        const issued = await client.call<typeof sessionPrepareMessage>('session-prepare', {
          provider: 'bridge',
          workspace,
          session,
          ...(view?.length ? { view } : {}),
          ...(parentToken ? { parentToken } : {}),
          ...(owner ? { owner } : {}),
        })
        // answered once the daemon's start-up reconcile published the routes (bounded there): a daemon that
        // just started serves MCP before that, and a call then would find no tools
        await client.available()
        const url = new URL(issued.url)
        const link: Link = { port: Number(url.port), path: url.pathname, token: issued.token, daemon: client }
        this.current = link
        for (const listener of this.linked) listener(link)
        return link
      } finally {
        this.pending = undefined
      }
    })()
    return this.pending
  }
}
