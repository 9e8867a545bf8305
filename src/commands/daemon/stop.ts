import { Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { DaemonControl } from '../../runtime/client/daemon-control.js'

export default class DaemonStop extends TuttiCommand {
  static override hidden = true
  static override summary =
    'Stop the daemon politely, then TERM, then KILL; session tokens outlive it unless --revoke-sessions'
  static override description =
    'A running `session exec` starts the daemon again for its agent; end its session first ' +
    '(`session revoke`, or --revoke-sessions) to keep the daemon stopped.'
  static override flags = {
    'revoke-sessions': Flags.boolean({
      description: 'also revoke every session token (running agents lose their connectors)',
      default: false,
    }),
  }
  static override examples = ['<%= config.bin %> daemon stop', '<%= config.bin %> daemon stop --revoke-sessions']

  async run() {
    const { flags } = await this.parse(DaemonStop)
    const result = await new DaemonControl(this.paths).stop({ revokeSessions: flags['revoke-sessions'] })
    if (!this.jsonEnabled())
      this.log(
        result.stopped
          ? `daemon ${result.pid} stopped`
          : result.stale
            ? `daemon was not running; removed a stale daemon.json (${result.stale})`
            : 'daemon was not running',
      )
    return result
  }
}
