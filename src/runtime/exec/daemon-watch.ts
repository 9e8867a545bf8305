import http from 'node:http'
import { ensureDaemon } from '../client/ensure-daemon.js'
import { HEADER, MODERN_REVISION, toolsListenRequest } from '../mcp-wire.js'
import type { StatePaths } from '../paths.js'
import { stillSame, waitUntil, type ProvenProcess } from '../proc/pid.js'
import { sessionStillStored } from '../sessions/stored-session.js'
import { PRODUCT_VERSION } from '../version.js'

/**
 * A watch that held this long was stable: the loss that ends it is answered
 * at once (a daemon killed with -9 is started again within a second).
 * Losses in quicker succession wait first, from FIRST_RETRY_MS doubling to
 * MAX_RETRY_MS, so that a daemon that keeps failing is not started in a
 * tight loop.
 */
const STABLE_WATCH_MS = 10_000
const FIRST_RETRY_MS = 250
const MAX_RETRY_MS = 30_000
/**
 * A daemon that ended the watch because it is stopping closes its upstreams
 * first (bounded by its own grace times): it gets this long to exit before
 * the watch goes on (ensureDaemon then waits for its lock, too).
 */
const STOPPING_DAEMON_EXIT_MS = 15_000

const WATCH_ID = 'tutti-exec-watch'
/** In a stream's text, the daemon's answer to the watch: sent only when it stops (a listen stream's last message). */
const ANSWER_MARK = `"id":"${WATCH_ID}"`
const WATCH_REQUEST = toolsListenRequest(WATCH_ID, { name: 'tutti-session-exec', version: PRODUCT_VERSION })

/**
 * How a watch ended: the token is refused (revoked or expired: the session
 * is over), nothing listens, the daemon answered that it stops, the stream
 * was cut (the daemon died, or closed the streams of a revoked session), or
 * the daemon refused the stream (a cap).
 */
type WatchEnd = 'unauthorized' | 'refused' | 'stopping' | 'cut' | 'rejected'

export interface DaemonWatchOptions {
  paths: StatePaths
  /** The agent's connector server (its URL names the port the agent uses) and token. */
  url: string
  token: string
  /** One line on stderr (the agent's terminal). */
  warn: (line: string) => void
}

/**
 * `session exec`'s watch over its daemon (issue 23): while the agent runs,
 * a listen stream of the agent's own session is held open at the daemon.
 * Its end is the event: a daemon that died (kill -9) or stopped (`daemon
 * stop`; the agent still needs its tools) is started again through
 * ensureDaemon, whose start lock lets two execs racing start one daemon,
 * on its previous port, so the agent's URL and token work again. The watch
 * ends for good when the session does: a 401, or a session no longer in
 * sessions.json (revoked with the daemon, or expired), which starts
 * nothing. It never signals anything.
 */
export class DaemonWatch {
  private closed = false
  private running?: Promise<void>
  private cancel?: () => void
  private wake?: () => void
  private warned?: string

  constructor(private readonly options: DaemonWatchOptions) {}

  start(): void {
    this.running ??= this.run().catch((err: unknown) => this.options.warn(`tutti: the daemon watch failed: ${err}`))
  }

  /** The agent exited: end the stream, and resolve once the watch (a daemon start it began, too) is over. */
  async stop(): Promise<void> {
    this.closed = true
    this.cancel?.()
    this.wake?.()
    await this.running
  }

  private async run(): Promise<void> {
    const agentPort = Number(new URL(this.options.url).port)
    let retryMs = 0
    while (!this.closed) {
      const daemon = await this.daemon()
      if (this.closed) return
      if (daemon) {
        if (daemon.port !== agentPort)
          this.warnOnce(
            `tutti: the daemon runs on port ${daemon.port} now, not ${agentPort}: ` +
              "the agent's connector server is out of reach until the daemon is back on that port",
          )
        const since = Date.now()
        const end = await this.hold(daemon.port)
        if (this.closed || end === 'unauthorized') return
        if (end === 'stopping')
          await waitUntil(() => this.closed || !stillSame(daemon.process), STOPPING_DAEMON_EXIT_MS)
        retryMs = Date.now() - since >= STABLE_WATCH_MS ? 0 : backoff(retryMs)
      } else retryMs = backoff(retryMs)
      // revoked together with the daemon, or expired: no daemon is started for a session that is over
      if (!(await sessionStillStored(this.options.paths.sessionsJson, this.options.token))) return
      await this.sleep(retryMs)
    }
  }

  /** The daemon that runs now (started if none does), proven by ensureDaemon, and its process. */
  private async daemon(): Promise<{ port: number; process: ProvenProcess } | undefined> {
    try {
      const client = await ensureDaemon(this.options.paths, { anyVersion: true })
      const health = await client.health()
      this.warned = undefined
      const process: ProvenProcess = {
        pid: health.pid,
        ...(health.processStart ? { startTicks: health.processStart } : {}),
      }
      return { port: client.endpoint.port, process }
    } catch (err) {
      // said once on stderr; the watch tries again after its backoff
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0]
      this.warnOnce(`tutti: the daemon is gone and could not be started again (${reason}); trying again`)
      return undefined
    }
  }

  /** The listen stream, held until it ends. */
  private hold(port: number): Promise<WatchEnd> {
    return new Promise((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        path: new URL(this.options.url).pathname,
        method: 'POST',
        // a socket of its own: the stream holds it for the agent's whole life
        agent: false,
        headers: {
          host: `127.0.0.1:${port}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(WATCH_REQUEST),
          authorization: `Bearer ${this.options.token}`,
          [HEADER.protocolVersion]: MODERN_REVISION,
          [HEADER.method]: 'subscriptions/listen',
        },
      })
      this.cancel = () => req.destroy()
      req.once('response', (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          return resolve(res.statusCode === 401 ? 'unauthorized' : 'rejected')
        }
        let tail = ''
        let answered = false
        res.setEncoding('utf8')
        res.on('data', (text: string) => {
          const seen = tail + text
          if (seen.includes(ANSWER_MARK)) answered = true
          tail = seen.slice(-ANSWER_MARK.length)
        })
        // an end without the answer is a cut too: the daemon closed the streams of a revoked session
        res.once('end', () => resolve(answered ? 'stopping' : 'cut'))
        res.once('close', () => resolve(answered ? 'stopping' : 'cut'))
        // the socket went: 'close' follows, and says the same
        res.on('error', () => undefined)
      })
      req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : 'cut'))
      req.end(WATCH_REQUEST)
    })
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done(): void {
        clearTimeout(timer)
        resolve()
      }
      this.wake = done
    })
  }

  private warnOnce(line: string): void {
    if (this.warned === line) return
    this.warned = line
    this.options.warn(line)
  }
}

const backoff = (ms: number): number => Math.min(MAX_RETRY_MS, Math.max(FIRST_RETRY_MS, ms * 2))
