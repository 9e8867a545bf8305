import type { Logger } from '../log/logger.js'

/**
 * Work for one connector runs in order, one step at a time; across
 * connectors at most `concurrency` steps run at once (each may spawn a
 * process, and there are two cores).
 */
export class KeyedWorkQueue {
  private readonly queues = new Map<string, Promise<void>>()
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    private readonly concurrency: number,
    private readonly log: Logger,
  ) {}

  /** Run `work` after everything already queued for `key`; a failure is logged, never thrown. */
  enqueue(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.queues.get(key) ?? Promise.resolve()
    const run = previous.then(async () => {
      await this.acquire()
      try {
        await work()
      } catch (err) {
        this.log.error('reconcile step failed', { connector: key, error: err })
      } finally {
        this.release()
      }
    })
    this.queues.set(key, run)
    void run.finally(() => {
      if (this.queues.get(key) === run) this.queues.delete(key)
    })
    return run
  }

  private acquire(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++
      return Promise.resolve()
    }
    return new Promise((resolve) => this.waiting.push(() => resolve()))
  }

  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}
