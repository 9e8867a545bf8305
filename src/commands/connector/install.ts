import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'

export default class ConnectorInstall extends TuttiCommand {
  static override hidden = true
  static override summary = 'Install a connector from a directory holding tutti-connector.json'
  static override args = { dir: Args.directory({ description: 'connector release directory', required: true, exists: false }) }
  static override examples = ['<%= config.bin %> connector install ./examples/connectors/notes --json']

  async run() {
    const { args } = await this.parse(ConnectorInstall)
    const result = await new Connectors(this.paths).install(args.dir)
    if (!this.jsonEnabled()) this.log(`${result.changed ? 'installed' : 'already installed'} ${result.key} ${result.version} (${result.state?.status ?? 'unknown'})`)
    return result
  }
}
