import { TuttiCommand } from '../../cli/base-command.js'
import { runDaemonInForeground } from '../../runtime/client/daemon-control.js'

export default class DaemonRun extends TuttiCommand {
  static override hidden = true
  static override summary = 'Run the daemon in the foreground (logs go to daemon.log in the state directory)'
  static override examples = ['TUTTI_STATE_DIR=/tmp/tutti <%= config.bin %> daemon run']

  async run() {
    await this.parse(DaemonRun)
    return runDaemonInForeground((pid, port) => {
      if (!this.jsonEnabled()) this.log(`daemon ${pid} listening on 127.0.0.1:${port}; Ctrl-C stops it`)
    })
  }
}
