import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'

export default class ConnectorInstall extends TuttiCommand {
  static override hidden = true
  static override summary = 'Install a connector from a directory holding tutti-connector.json, or a .tgz of one'
  static override args = { source: Args.string({ description: 'connector release directory or .tgz archive', required: true }) }
  static override examples = ['<%= config.bin %> connector install ./examples/connectors/notes --json', '<%= config.bin %> connector install ./github-connector-1.4.0.tgz']

  async run() {
    const { args } = await this.parse(ConnectorInstall)
    const result = await new Connectors(this.paths).install(args.source)
    if (!this.jsonEnabled()) this.log(`${result.changed ? 'installed' : 'already installed'} ${result.key} ${result.version} (${result.state?.status ?? 'unknown'})`)
    return result
  }
}
