import type { StatePaths } from '../paths.js'
import type { AvailableResult } from '../protocol/available.js'
import type { ConnectorState } from '../protocol/connector-state.js'
import type { ConnectorStore, InstallResult } from '../store/connector-store.js'
import { ensureDaemon } from './ensure-daemon.js'

/**
 * What the connector commands do: change the state on disk (validated
 * first, under the state lock), then have the daemon reconcile. Installing
 * never depends on the daemon being up already: it is started here.
 */
export class Connectors {
  constructor(private readonly paths: StatePaths) {}

  // validation (zod, yaml) is loaded only by the commands that change state
  private async store(): Promise<ConnectorStore> {
    const { ConnectorStore } = await import('../store/connector-store.js')
    return new ConnectorStore(this.paths)
  }

  async available(): Promise<AvailableResult> {
    return (await ensureDaemon(this.paths)).available()
  }

  async install(dir: string): Promise<InstallResult & { state?: ConnectorState }> {
    const result = await (await this.store()).install(dir)
    return { ...result, state: await this.reconcile(result.key) }
  }

  async uninstall(key: string): Promise<{ key: string; uninstalled: true }> {
    await (await this.store()).uninstall(key)
    await this.reconcile(key)
    return { key, uninstalled: true }
  }

  async connect(key: string, values: Record<string, string>): Promise<{ key: string; variables: string[]; state?: ConnectorState }> {
    const result = await (await this.store()).connect(key, values)
    return { key, variables: result.variables, state: await this.reconcile(key) }
  }

  async disconnect(key: string): Promise<{ key: string; disconnected: boolean; state?: ConnectorState }> {
    const result = await (await this.store()).disconnect(key)
    return { key, disconnected: result.removed, state: await this.reconcile(key) }
  }

  private async reconcile(key: string): Promise<ConnectorState | undefined> {
    const daemon = await ensureDaemon(this.paths)
    return (await daemon.reconcile([key])).connectors.find((c) => c.key === key)
  }
}
