import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { describeState, outcomeFlags, outcomeWait } from '../../cli/outcome-flags.js'
import { Connectors } from '../../runtime/client/connectors.js'

export default class ConnectorInstall extends TuttiCommand {
  static override hidden = true
  static override summary = 'Install a connector from a directory holding tutti-connector.json, or a .tgz of one'
  static override description = `npm dependencies named in the release's package.json are installed into it (with your npm, --ignore-scripts unless the manifest sets npm.scripts).
A stdio command is resolved against this shell's PATH and recorded. The command waits for the connector's outcome and exits 1 with the reason if it is not ready.`
  static override args = { source: Args.string({ description: 'connector release directory or .tgz archive', required: true }) }
  static override flags = { ...outcomeFlags }
  static override examples = ['<%= config.bin %> connector install ./examples/connectors/notes --json', '<%= config.bin %> connector install ./github-connector-1.4.0.tgz --no-wait']

  async run() {
    const { args, flags } = await this.parse(ConnectorInstall)
    // progress only for a person watching: it goes to stderr, and never in --json mode
    const progress = process.stderr.isTTY && !this.jsonEnabled() ? (line: string) => process.stderr.write(`${line}\n`) : undefined
    const result = await new Connectors(this.paths).install(args.source, { ...outcomeWait(flags), ...(progress ? { progress } : {}) })
    if (!this.jsonEnabled()) this.log(`${result.changed ? 'installed' : 'already installed'} ${result.key} ${result.version} (${describeState(result.state)})`)
    return result
  }
}
