import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'

export default class ConnectorDisconnect extends TuttiCommand {
  static override hidden = true
  static override summary =
    "Forget a connector's credentials (an OAuth connector's tokens are revoked where the server offers it)"
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override examples = ['<%= config.bin %> connector disconnect weather']

  async run() {
    const { args } = await this.parse(ConnectorDisconnect)
    const result = await new Connectors(this.paths).disconnect(args.key)
    if (!this.jsonEnabled()) {
      const revoked = result.revocation
        ? result.revocation.revoked
          ? `; tokens revoked at ${result.revocation.endpoint}`
          : `; tokens forgotten, not revoked: ${result.revocation.reason}`
        : ''
      this.log(`disconnected ${result.key} (${result.state?.status ?? 'unknown'})${revoked}`)
    }
    return result
  }
}
