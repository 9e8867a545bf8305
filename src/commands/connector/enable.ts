import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { describeState, outcomeFlags, outcomeWait } from '../../cli/outcome-flags.js'
import { switchConnector } from '../../runtime/client/connector-visibility.js'

export default class ConnectorEnable extends TuttiCommand {
  static override hidden = true
  static override summary = 'Serve a disabled connector again: its tools, command and Skills come back as they were'
  static override description = `Enabling a connector that is not disabled changes nothing. Like connect, it waits for
the outcome and exits 1 if its MCP server fails to start.`
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override flags = { ...outcomeFlags }
  static override examples = ['<%= config.bin %> connector enable github']

  async run() {
    const { args, flags } = await this.parse(ConnectorEnable)
    const result = await switchConnector(this.paths, args.key, false, outcomeWait(flags))
    if (!this.jsonEnabled())
      this.log(
        result.changed
          ? `enabled ${result.key} (${describeState(result.state)})`
          : `${result.key} is not disabled; nothing changed (${describeState(result.state)})`,
      )
    return result
  }
}
