import { renderDaemonStatus } from '../../cli/daemon-status-text.js'
import { TuttiCommand } from '../../cli/base-command.js'
import { DaemonControl } from '../../runtime/client/daemon-control.js'

export default class DaemonStatus extends TuttiCommand {
  static override hidden = true
  static override summary = 'Show the daemon (pid, port, version, uptime) and the state of each connector'
  static override examples = ['<%= config.bin %> daemon status --json']

  async run() {
    await this.parse(DaemonStatus)
    const status = await new DaemonControl(this.paths).status()
    if (!this.jsonEnabled()) this.out(renderDaemonStatus(status))
    return status
  }
}
