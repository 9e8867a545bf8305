import { renderAvailable } from '../../cli/available-table.js'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'
import type { AvailableResult } from '../../runtime/control-protocol/available.js'

export default class ConnectorAvailable extends TuttiCommand {
  static override summary = 'List the connectors your agent can use and how to reach them'
  static override description =
    `Shows each installed connector, the native interfaces it offers and whether they are ready:
  mcp  tools on the "connector" MCP server, named <key>_<tool>
  cli  a command on your PATH, tutti-connector-<key>
Skills are listed by name; your agent reads them from its own Skill roots.`
  static override examples = ['<%= config.bin %> connector available', '<%= config.bin %> connector available --json']

  async run(): Promise<AvailableResult> {
    await this.parse(ConnectorAvailable)
    const result = await new Connectors(this.paths).available()
    if (!this.jsonEnabled()) this.out(renderAvailable(result))
    return result
  }
}
