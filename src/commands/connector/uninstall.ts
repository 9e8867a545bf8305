import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'

export default class ConnectorUninstall extends TuttiCommand {
  static override hidden = true
  static override summary = 'Uninstall a connector (its tools, shim and credentials go with it)'
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override examples = ['<%= config.bin %> connector uninstall notes']

  async run() {
    const { args } = await this.parse(ConnectorUninstall)
    const result = await new Connectors(this.paths).uninstall(args.key)
    if (!this.jsonEnabled()) this.log(`uninstalled ${result.key}`)
    return result
  }
}
