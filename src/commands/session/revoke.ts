import { Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { revokeSessions } from '../../runtime/client/sessions.js'

export default class SessionRevoke extends TuttiCommand {
  static override hidden = true
  static override summary = "Revoke an agent session's token at once (or every token with --all)"
  static override flags = {
    session: Flags.string({ description: 'agent session id', exactlyOne: ['session', 'all'] }),
    workspace: Flags.string({ description: 'only the session in this workspace', dependsOn: ['session'] }),
    all: Flags.boolean({ description: 'revoke every session token', exactlyOne: ['session', 'all'] }),
  }
  static override examples = [
    '<%= config.bin %> session revoke --session 7f3c',
    '<%= config.bin %> session revoke --all',
  ]

  async run() {
    const { flags } = await this.parse(SessionRevoke)
    const result = await revokeSessions(this.paths, {
      session: flags.session,
      workspace: flags.workspace,
      all: flags.all || undefined,
    })
    if (!this.jsonEnabled()) this.log(`revoked ${result.revoked} session token(s)`)
    return result
  }
}
