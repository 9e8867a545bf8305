import { renderAvailable } from '../../cli/available-table.js'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'
import type { AvailableResult } from '../../runtime/control-protocol/available.js'
import { TOKEN_ENV } from '../../runtime/names.js'

export default class ConnectorAvailable extends TuttiCommand {
  static override summary = 'List the connectors your agent can use and how to reach them'
  static override description =
    `Shows each installed connector, the native interfaces it offers and whether they are ready:
  mcp  tools on the "connector" MCP server, named <key>_<tool>
  cli  a command on your PATH, tutti-connector-<key>
Skills are listed by name; your agent reads them from its own Skill roots.
Inside an agent session (${TOKEN_ENV} set) it shows what that session sees, and what its tools cost.`
  static override examples = ['<%= config.bin %> connector available', '<%= config.bin %> connector available --json']

  async run(): Promise<AvailableResult> {
    await this.parse(ConnectorAvailable)
    const result = await new Connectors(this.paths).available(process.env[TOKEN_ENV] || undefined)
    if (!this.jsonEnabled()) this.out(renderAvailable(result))
    return result
  }
}
