import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { switchConnector } from '../../runtime/client/connector-visibility.js'

export default class ConnectorDisable extends TuttiCommand {
  static override hidden = true
  static override summary =
    'Stop serving a connector without uninstalling it: its tools, command and Skills go; its release, credentials, ' +
    'settings, sign-in and data stay'
  static override description = `Its MCP server is stopped and not started again, also by a daemon restart, an
update or a reinstall, until \`tutti connector enable\`. Disabling a disabled connector changes nothing.`
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override examples = ['<%= config.bin %> connector disable github']

  async run() {
    const { args } = await this.parse(ConnectorDisable)
    const result = await switchConnector(this.paths, args.key, true)
    if (!this.jsonEnabled())
      this.log(
        result.changed
          ? `disabled ${result.key}: nothing of it is served; its credentials, settings and data are kept ` +
              `(tutti connector enable ${result.key} brings it back)`
          : `${result.key} is already disabled; nothing changed`,
      )
    return result
  }
}
