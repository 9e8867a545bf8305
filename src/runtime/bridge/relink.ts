import fs from 'node:fs'
import type { DaemonHttp } from './daemon-http.js'
import type { DaemonLink, Link } from './daemon-link.js'

/**
 * A link that was lost quickly is not replaced at once: two bridges given
 * the same `--session` revoke each other's token on every re-issue, and
 * must not do it in a tight loop. A link that lived this long was stable.
 */
const STABLE_LINK_MS = 10_000
const FIRST_RETRY_MS = 250
const MAX_RETRY_MS = 30_000

/**
 * After a loss (the daemon stopped or crashed, or revoked the token): link
 * again as soon as a daemon runs, found, never started (a stopped daemon
 * stays stopped until a client request needs it, and that request starts
 * it). A new daemon is seen when its daemon.json is written, through a
 * watch on the state dir, not by polling.
 */
export class Relink {
  private running = false
  private closed = false
  private retryMs = 0
  private readonly linkedAt = new WeakMap<Link, number>()
  private wake?: () => void

  constructor(
    private readonly link: DaemonLink,
    private readonly http: DaemonHttp,
    private readonly stateDir: string,
  ) {
    link.onLinked((l) => {
      this.linkedAt.set(l, Date.now())
      this.wake?.()
    })
  }

  lost(link: Link): void {
    if (this.closed) return
    this.link.drop(link)
    // its kept-alive connections went with it
    this.http.reset()
    const lived = Date.now() - (this.linkedAt.get(link) ?? 0)
    this.retryMs = lived >= STABLE_LINK_MS ? 0 : Math.min(MAX_RETRY_MS, Math.max(FIRST_RETRY_MS, this.retryMs * 2))
    if (!this.running) void this.run()
  }

  close(): void {
    this.closed = true
    this.wake?.()
  }

  private async run(): Promise<void> {
    this.running = true
    try {
      if (this.retryMs) await this.waitFor(this.retryMs, false)
      while (!this.closed && !this.link.link) {
        // watch first, then look: a daemon.json written between the two is not missed
        const appeared = this.waitFor(undefined, true)
        // no daemon to attach to yet: the loop waits for daemon.json to appear and tries again
        if (await this.link.attach().catch(() => undefined)) break
        await appeared
      }
    } finally {
      this.running = false
      this.wake = undefined
    }
  }

  /** Until `ms` passed, a new link came, the bridge closed, or (`watch`) daemon.json was written. */
  private waitFor(ms: number | undefined, watch: boolean): Promise<void> {
    return new Promise((resolve) => {
      let watcher: fs.FSWatcher | undefined
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        watcher?.close()
        clearTimeout(timer)
        if (this.wake === done) this.wake = undefined
        resolve()
      }
      this.wake = done
      if (this.closed) return done()
      if (ms !== undefined) timer = setTimeout(done, ms)
      if (watch) {
        try {
          watcher = fs.watch(this.stateDir, (_event, name) => {
            if (name === 'daemon.json') done()
          })
          watcher.on('error', done)
        } catch {
          // no state dir yet: the next client request starts the daemon, and its link wakes us
        }
      }
    })
  }
}
