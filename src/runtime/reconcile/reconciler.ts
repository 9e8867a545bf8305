import type { Logger } from '../log/logger.js'
import { isAuthReady } from '../manifest/schema.js'
import type { ConnectorState } from '../protocol/connector-state.js'
import type { ConnectorStore, ListedConnector } from '../store/connector-store.js'

/**
 * Brings the daemon's view of each connector in line with installed.json and
 * credentials.json. A connector is active iff it is installed and its auth is
 * ready. Reconciles are serialized: one at a time, in arrival order.
 */
export class Reconciler {
  private readonly states = new Map<string, ConnectorState>()
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly store: ConnectorStore,
    private readonly log: Logger,
  ) {}

  reconcile(keys?: readonly string[]): Promise<ConnectorState[]> {
    const run = this.queue.then(() => this.reconcileNow(keys))
    this.queue = run.catch(() => {})
    return run
  }

  snapshot(): ConnectorState[] {
    return [...this.states.values()].sort((a, b) => a.key.localeCompare(b.key))
  }

  state(key: string): ConnectorState | undefined {
    return this.states.get(key)
  }

  private async reconcileNow(keys?: readonly string[]): Promise<ConnectorState[]> {
    const listed = await this.store.list()
    const installed = new Map(listed.map((c) => [c.installed.key, c]))
    const targets = keys ? [...new Set(keys)] : [...new Set([...installed.keys(), ...this.states.keys()])]
    for (const key of targets) {
      const entry = installed.get(key)
      if (!entry) {
        if (this.states.delete(key)) this.log.info('connector removed', { connector: key })
        continue
      }
      this.states.set(key, this.evaluate(entry))
    }
    return targets.map((k) => this.states.get(k)).filter((s): s is ConnectorState => !!s)
  }

  private evaluate(entry: ListedConnector): ConnectorState {
    const { key, version } = entry.installed
    const previous = this.states.get(key)
    const base = { key, version, generation: previous?.generation ?? 0, tools: previous?.tools ?? 0, lastChange: new Date().toISOString() }
    if (!entry.release) {
      this.log.error('installed release is unreadable', { connector: key, error: entry.loadError })
      return { ...base, status: 'failed', error: entry.loadError }
    }
    const active = isAuthReady(entry.release.manifest, entry.credentials)
    const state: ConnectorState = { ...base, status: active ? 'ready' : 'needs-auth' }
    if (previous?.status !== state.status || previous.version !== version) this.log.info('connector reconciled', { connector: key, version, status: state.status })
    return state
  }
}
