import { renderDaemonStatus } from '../../cli/daemon-status-text.js'
import { TuttiCommand } from '../../cli/base-command.js'
import { DaemonControl } from '../../runtime/client/daemon-control.js'

export default class DaemonStart extends TuttiCommand {
  static override hidden = true
  static override summary = 'Start the background daemon unless it is already running'
  static override examples = ['<%= config.bin %> daemon start --json']

  async run() {
    await this.parse(DaemonStart)
    const status = await new DaemonControl(this.paths).start()
    if (!this.jsonEnabled()) this.out(renderDaemonStatus(status))
    return status
  }
}
