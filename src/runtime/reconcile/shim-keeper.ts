import path from 'node:path'
import type { Logger } from '../log/logger.js'
import type { InterfaceStatus } from '../control-protocol/connector-state.js'
import type { ShimPublisher } from '../shims/shim-publisher.js'
import { specHash, type DesiredConnector } from './desired-connector.js'

interface Published {
  generation: number
  /** The desired state it was published for. */
  hash: string
}

/**
 * The CLI shims of the active connectors: published after a commit (or a
 * failed first start: the CLI depends on the connector being active, not
 * on its MCP server), once per desired state, put back when deleted behind
 * our back, withdrawn when the connector is.
 */
export class ShimKeeper {
  private readonly published = new Map<string, Published>()
  private readonly errors = new Map<string, string>()

  constructor(
    private readonly publisher: ShimPublisher,
    private readonly log: Logger,
  ) {}

  /** `generation`: the route generation the shim goes with (0: none committed, so `fallback` is used). */
  async ensure(key: string, desired: DesiredConnector, generation: number, fallback = 1): Promise<void> {
    const cli = desired.release.manifest.cli
    if (!cli) return
    const hash = specHash(desired)
    const current = this.published.get(key)
    if (current?.hash === hash && (await this.publisher.publishedGeneration(key)) === current.generation) return
    const gen = generation || current?.generation || fallback
    try {
      await this.publisher.publish({
        key,
        generation: gen,
        digest: desired.digest,
        entrypoint: path.resolve(desired.release.root, cli.entrypoint),
      })
      this.published.set(key, { generation: gen, hash })
      this.errors.delete(key)
    } catch (err) {
      const error = this.log.redactor.redactString((err as Error).message)
      this.errors.set(key, error)
      this.log.error('shim publish failed', { connector: key, generation: gen, error })
    }
  }

  generation(key: string): number {
    return this.published.get(key)?.generation ?? 0
  }

  state(key: string, hash: string | undefined): { status: InterfaceStatus; reason?: string; shimGeneration: number } {
    const current = this.published.get(key)
    if (current && current.hash === hash) return { status: 'ready', shimGeneration: current.generation }
    const error = this.errors.get(key)
    return error
      ? { status: 'failed', reason: error, shimGeneration: current?.generation ?? 0 }
      : { status: 'starting', reason: 'publishing the command', shimGeneration: current?.generation ?? 0 }
  }

  async withdraw(key: string): Promise<void> {
    const current = this.published.get(key)
    this.published.delete(key)
    this.errors.delete(key)
    if (!current) return
    try {
      await this.publisher.remove(key, current.generation)
    } catch (err) {
      this.log.error('shim removal failed', { connector: key, error: err })
    }
  }
}
