import { bestEffort } from '../log/best-effort.js'
import type { Logger } from '../log/logger.js'
import type { UpstreamSupervisor } from '../upstream/upstream-supervisor.js'
import type { DesiredConnector } from './desired-connector.js'

/** An uninstalled or disconnected connector's calls in flight: finished quickly, the user asked it gone. */
export const DEACTIVATE_DRAIN_MS = 5_000
/** The daemon is stopping: calls in flight get a second, then everything closes. */
export const SHUTDOWN_DRAIN_MS = 1_000
/** Calls in flight on a replaced upstream (an upgrade) get this long to finish. */
const RETIRE_DRAIN_MS = 30_000

/**
 * A connector's upstreams: the one whose generation serves, and the one
 * started for a new desired state that has not committed yet. Each is
 * closed here and nowhere else, with the drain its ending deserves.
 */
export class UpstreamPair {
  /** The supervisor whose generation serves. */
  serving?: UpstreamSupervisor
  /** A supervisor for the desired state that has not committed yet (still starting, or retrying). */
  pending?: UpstreamSupervisor
  /** The desired state each supervisor was made for: what a failed change is compared with. */
  private readonly wantedBy = new WeakMap<UpstreamSupervisor, DesiredConnector>()

  constructor(
    private readonly key: string,
    private readonly log: Logger,
  ) {}

  /** `supervisor` is started for `desired` (one still starting for an older state was dropped first). */
  begin(supervisor: UpstreamSupervisor, desired: DesiredConnector): void {
    this.wantedBy.set(supervisor, desired)
    this.pending = supervisor
  }

  /** `supervisor` is one of these two (its events still count). */
  owns(supervisor: UpstreamSupervisor): boolean {
    return supervisor === this.serving || supervisor === this.pending
  }

  /** Started for a new state, and not serving: its failure is a failed change. */
  isChange(supervisor: unknown): boolean {
    return supervisor === this.pending && supervisor !== this.serving
  }

  /** The desired state the serving upstream was started for. */
  servingWanted(): DesiredConnector | undefined {
    return this.serving && this.wantedBy.get(this.serving)
  }

  /** A committed table: `next` serves (none: a table without an upstream) and the previous one retires. */
  promote(next: UpstreamSupervisor | undefined): void {
    if (next === this.serving) return
    const retired = this.serving
    this.serving = next
    if (next && this.pending === next) this.pending = undefined
    if (!retired) return
    const drain = next ? RETIRE_DRAIN_MS : DEACTIVATE_DRAIN_MS
    void bestEffort(retired.dispose(drain), this.log, 'retiring the previous upstream', { connector: this.key })
  }

  /** The serving upstream stops (its tools were withdrawn). */
  stopServing(): void {
    const retired = this.serving
    if (!retired) return
    this.serving = undefined
    const closing = retired.dispose(DEACTIVATE_DRAIN_MS)
    void bestEffort(closing, this.log, 'closing a withdrawn upstream', { connector: this.key })
  }

  dropPending(why: string): void {
    const pending = this.pending
    this.pending = undefined
    if (pending) void bestEffort(pending.dispose(0), this.log, why, { connector: this.key })
  }

  /** While a generation serves, its upstream is the one shown; else the one being started. */
  shown(ready: boolean): UpstreamSupervisor | undefined {
    return ready && this.serving ? this.serving : (this.pending ?? this.serving)
  }

  async closeAll(drainMs: number): Promise<void> {
    const all = [this.serving, this.pending].filter((s): s is UpstreamSupervisor => !!s)
    this.serving = undefined
    this.pending = undefined
    const close = (s: UpstreamSupervisor) =>
      bestEffort(s.dispose(drainMs), this.log, 'closing an upstream', { connector: this.key })
    await Promise.all(all.map(close))
  }
}
