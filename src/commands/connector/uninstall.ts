import { Args, Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'

export default class ConnectorUninstall extends TuttiCommand {
  static override hidden = true
  static override summary =
    'Uninstall a connector (its tools, shim, log and credentials go; data it wrote stays unless --purge)'
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override flags = {
    purge: Flags.boolean({ description: "also delete the connector's data directory", default: false }),
  }
  static override examples = [
    '<%= config.bin %> connector uninstall notes',
    '<%= config.bin %> connector uninstall notes --purge',
  ]

  async run() {
    const { args, flags } = await this.parse(ConnectorUninstall)
    const result = await new Connectors(this.paths).uninstall(args.key, { purge: flags.purge })
    if (!this.jsonEnabled()) {
      const data = {
        kept: `; its data is kept in ${result.dataDir} (a reinstall finds it again; --purge deletes it)`,
        purged: '; its data was deleted',
        none: '',
      }[result.data]
      this.log(`uninstalled ${result.key}${data}`)
    }
    return result
  }
}
