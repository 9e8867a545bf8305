import { ErrorCodes, TuttiError } from '../errors.js'
import type { RouteClient } from '../registry/route.js'
import { isTerminal, type DetailedTask, type RouteTasks } from '../registry/tasks.js'

/**
 * How long a task still counts as live without news of it: no tasks/get
 * through tutti (a client's poll, or tutti's own for a listen stream) saw it
 * for this long. A client that never comes back must not keep a lazy
 * upstream running for ever; one that polls, or listens, refreshes it.
 */
export const LIVE_TASK_QUIET_MS = 30 * 60_000

/** Tasks one connection holds at most as live; past it the oldest news is dropped first. */
export const MAX_LIVE_TASKS = 10_000

/** A task as far as liveness goes: the connection it runs on, and when it stops counting. */
interface Live {
  readonly on: object
  readonly until: number
}

/**
 * The tasks an upstream is working on, as far as tutti heard: each counts
 * until a tasks/get (or the answer that made it) shows it terminal, or
 * until it is past its TTL (the upstream may discard it then) or
 * LIVE_TASK_QUIET_MS without news, whichever is first. A lazy upstream
 * whose connection holds any is not idle (idle-stop.ts); `settled` tells
 * when a connection's last one stops counting, so its idle period starts
 * then. A task counts for the connection it runs on only: one of an
 * upstream that exited keeps no later connection up.
 */
export class LiveTasks {
  /** By connection epoch and upstream task id. */
  private readonly tasks = new Map<string, Live>()
  private timer?: NodeJS.Timeout

  constructor(
    private readonly settled: () => void,
    private readonly quietMs = LIVE_TASK_QUIET_MS,
  ) {}

  /** What an answer on connection `on` showed of one of its tasks. */
  observed(on: object, epoch: string, task: Pick<DetailedTask, 'taskId' | 'status' | 'createdAt' | 'ttlMs'>): void {
    const key = `${epoch} ${task.taskId}`
    const had = this.tasks.delete(key)
    if (!isTerminal(task.status)) {
      const created = Date.parse(task.createdAt)
      const expires = task.ttlMs !== null && Number.isFinite(created) ? created + task.ttlMs : Number.POSITIVE_INFINITY
      const until = Math.min(Date.now() + this.quietMs, expires)
      if (until > Date.now()) this.tasks.set(key, { on, until })
      if (this.tasks.size > MAX_LIVE_TASKS) this.tasks.delete(this.tasks.keys().next().value!)
    }
    this.schedule()
    if (had && !this.holds(on)) this.settled()
  }

  /** Whether connection `on` has a task that still counts. */
  holds(on: object): boolean {
    for (const live of this.tasks.values()) if (live.on === on) return true
    return false
  }

  get size(): number {
    return this.tasks.size
  }

  /** One timer, at the earliest end: a task that ran out of time stops counting without anyone asking. */
  private schedule(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.tasks.size === 0) return
    let next = Number.POSITIVE_INFINITY
    for (const live of this.tasks.values()) next = Math.min(next, live.until)
    this.timer = setTimeout(() => this.expire(), Math.max(0, next - Date.now()))
    this.timer.unref()
  }

  private expire(): void {
    this.timer = undefined
    const now = Date.now()
    let ended = false
    for (const [key, live] of this.tasks) {
      if (live.until > now) continue
      this.tasks.delete(key)
      ended = true
    }
    this.schedule()
    if (ended) this.settled()
  }
}

interface SupervisedUse<L> {
  /** A request on the running connection (a lazy one is started for it). */
  use: <T>(work: (link: L) => Promise<T>) => Promise<T>
  /** Where the tasks that still run are counted. */
  live: () => LiveTasks
}

/**
 * The tasks of a supervised upstream (upstream-supervisor.ts): made and
 * asked about on its running connection (`use` starts a lazy one), and
 * counted live in `live` until they end.
 */
export function supervisedTasks<L extends RouteClient>({ use, live }: SupervisedUse<L>): RouteTasks {
  return {
    call: (name, args, options) =>
      use(async (link) => {
        const answer = await tasksOf(link).call(name, args, options)
        if (answer.kind === 'task') live().observed(link, answer.epoch, answer.task)
        return answer
      }),
    request: (request, options) =>
      use(async (link) => {
        const answer = await tasksOf(link).request(request, options)
        if ('status' in answer) live().observed(link, request.epoch, answer as DetailedTask)
        return answer
      }),
  }
}

function tasksOf(link: RouteClient): RouteTasks {
  if (link.tasks) return link.tasks
  throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'this upstream connection relays no tasks')
}
