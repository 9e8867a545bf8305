import type { Logger } from '../log/logger.js'
import type { UpstreamTable } from '../registry/route.js'
import type { UpstreamLink } from './upstream-link.js'

/** Bursts of list_changed (tools, prompts, resources) are listed once. */
const LIST_CHANGED_COALESCE_MS = 50

/**
 * Listing one connector's upstream table: at a start, and again after the
 * upstream's own list_changed of any list (a burst listed once). A list
 * other than tools/list that fails is logged and served empty; a relisting
 * that fails keeps the previous table.
 */
export class TableListing {
  private timer?: NodeJS.Timeout

  constructor(
    private readonly key: string,
    private readonly log: Logger,
    private readonly relisted: (table: UpstreamTable) => void,
  ) {}

  async list(conn: UpstreamLink): Promise<UpstreamTable> {
    const { table, problems } = await conn.listTable()
    for (const problem of problems)
      this.log.warn('a list of the upstream failed; it is served empty', {
        connector: this.key,
        problem: this.log.redactor.redactString(problem),
      })
    return table
  }

  /** The upstream said a list changed; `current` says whether `conn` still serves when the burst is over. */
  changed(conn: UpstreamLink, current: () => boolean): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      if (!current()) return
      this.list(conn).then(
        (table) => this.relisted(table),
        (err: Error) =>
          this.log.error('listing after the upstream said its lists changed failed; the previous table stays', {
            connector: this.key,
            error: this.log.redactor.redactString(err.message),
          }),
      )
    }, LIST_CHANGED_COALESCE_MS)
  }

  cancel(): void {
    clearTimeout(this.timer)
  }
}
