import { watch, type FSWatcher } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../fs/atomic-write.js'
import { lockOwner } from '../fs/lock.js'
import type { Logger } from '../log/logger.js'
import type { StatePaths } from '../paths.js'
import { thisProcess } from '../proc/pid.js'
import { daemonInfoText, type DaemonInfo } from '../store/daemon-info.js'

/**
 * How often daemon.json is looked at without being told of a change (a file
 * system that reports none, inotify's watch limit reached). A CLI waiting
 * for it to be written again waits longer (client/lock-owner-daemon.ts).
 */
export const DAEMON_INFO_AUDIT_MS = 2_000

/** What was found instead of this daemon's daemon.json, for daemon.log (never its content: it may hold a token). */
function whatWasFound(text: string | undefined): string {
  if (text === undefined) return 'missing'
  if (text.trim() === '') return 'empty'
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // the description is the outcome: daemon.json's content is never logged
    return 'not JSON'
  }
  const pid = (parsed as { pid?: unknown } | null)?.pid
  return Number.isInteger(pid) && pid !== process.pid ? `naming pid ${pid as number}` : "not this daemon's"
}

/**
 * Keeps daemon.json describing this daemon while it holds the singleton
 * lock. A CLI finds the daemon's port and control token only there: one
 * emptied, deleted, or naming another process is written again at once from
 * the daemon's own record, so the CLI, which sees the lock's owner alive and
 * waits for it (client/lock-owner-daemon.ts), proves and reaches this daemon
 * instead of starting a rival that could never take the lock.
 */
export class DaemonInfoKeeper {
  private readonly text: string
  private readonly self = thisProcess()
  private watcher?: FSWatcher
  private timer?: NodeJS.Timeout
  private checking?: Promise<void>
  private checkAgain = false
  private stopped = false
  private failing = false

  constructor(
    private readonly paths: StatePaths,
    info: DaemonInfo,
    private readonly log: Logger,
  ) {
    this.text = daemonInfoText(info)
  }

  start(): void {
    const name = path.basename(this.paths.daemonJson)
    try {
      this.watcher = watch(this.paths.root, { persistent: false }, (_event, file) => {
        if (file === null || file === name) this.check()
      })
      this.watcher.on('error', (err) => this.log.warn('stopped watching daemon.json; audited instead', { error: err }))
    } catch (err) {
      this.log.warn('cannot watch daemon.json; it is audited instead', { error: err, everyMs: DAEMON_INFO_AUDIT_MS })
    }
    this.timer = setInterval(() => this.check(), DAEMON_INFO_AUDIT_MS)
    this.timer.unref()
  }

  /** Resolves once no write is under way: the daemon's shutdown removes daemon.json after it. */
  async stop(): Promise<void> {
    this.stopped = true
    this.watcher?.close()
    clearInterval(this.timer)
    await this.checking
  }

  /** One check at a time; a change seen during one is looked at again after it. */
  private check(): void {
    if (this.checking) {
      this.checkAgain = true
      return
    }
    this.checking = this.repair()
      .then(
        () => {
          if (this.failing) this.log.info('daemon.json written again after all')
          this.failing = false
        },
        (err: unknown) => {
          if (!this.failing) this.log.error('could not write daemon.json again', { error: err })
          this.failing = true
        },
      )
      .finally(() => {
        this.checking = undefined
        if (this.checkAgain && !this.stopped) {
          this.checkAgain = false
          this.check()
        }
      })
  }

  private async repair(): Promise<void> {
    if (this.stopped) return
    const found = await fs.readFile(this.paths.daemonJson, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined
      throw err
    })
    if (found === this.text || this.stopped) return
    // a daemon that took the lock over publishes its own daemon.json (this one is about to learn it lost the lock)
    const owner = await lockOwner(this.paths.daemonLockTarget)
    if (owner && (owner.pid !== this.self.pid || owner.startTicks !== this.self.startTicks)) return
    if (this.stopped) return
    await writeFileAtomic(this.paths.daemonJson, this.text)
    this.log.warn('daemon.json was damaged; wrote it again', { found: whatWasFound(found) })
  }
}
