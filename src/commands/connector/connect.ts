import { Args, Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Connectors } from '../../runtime/client/connectors.js'
import { ErrorCodes, TuttiError } from '../../runtime/errors.js'

export default class ConnectorConnect extends TuttiCommand {
  static override hidden = true
  static override summary = "Store a connector's credentials (never printed)"
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override flags = {
    env: Flags.string({ description: 'NAME=VALUE of a declared auth variable', multiple: true, default: [] }),
    'from-env': Flags.string({ description: "read NAME's value from this process's environment", multiple: true, default: [] }),
  }
  static override examples = [
    'GITHUB_TOKEN=... <%= config.bin %> connector connect github --from-env GITHUB_TOKEN',
    '<%= config.bin %> connector connect weather --env WEATHER_API_KEY=abc123',
  ]

  async run() {
    const { args, flags } = await this.parse(ConnectorConnect)
    const values: Record<string, string> = {}
    for (const pair of flags.env) {
      const eq = pair.indexOf('=')
      if (eq <= 0) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `--env expects NAME=VALUE, got "${pair.slice(0, Math.max(eq, 0)) || '(no name)'}=…"`)
      values[pair.slice(0, eq)] = pair.slice(eq + 1)
    }
    for (const name of flags['from-env']) {
      const value = process.env[name]
      if (value === undefined) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `--from-env ${name}: the variable is not set in this environment`)
      values[name] = value
    }
    const result = await new Connectors(this.paths).connect(args.key, values)
    if (!this.jsonEnabled()) this.log(`connected ${result.key} (${result.state?.status ?? 'unknown'})`)
    return result
  }
}
