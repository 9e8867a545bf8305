import { Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { Sessions } from '../../runtime/client/sessions.js'
import { PROVIDERS } from '../../runtime/protocol/session-prepare.js'

export default class SessionPrepare extends TuttiCommand {
  static override hidden = true
  static override summary = 'Prepare the runtime of one agent session: env, the connector MCP server, Skill roots'
  static override flags = {
    provider: Flags.string({ description: 'agent provider', options: [...PROVIDERS], required: true }),
    workspace: Flags.string({ description: 'workspace id the session belongs to', required: true }),
    session: Flags.string({ description: 'agent session id', required: true }),
  }
  static override examples = ['<%= config.bin %> session prepare --provider codex --workspace ~/src/app --session 7f3c --json']

  async run() {
    const { flags } = await this.parse(SessionPrepare)
    const runtime = await new Sessions(this.paths).prepare({ provider: flags.provider as (typeof PROVIDERS)[number], workspace: flags.workspace, session: flags.session })
    if (!this.jsonEnabled()) this.log(`prepared ${runtime.provider} session ${runtime.session}; use --json for the runtime (it contains the session token)`)
    return runtime
  }
}
