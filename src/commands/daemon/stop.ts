import { TuttiCommand } from '../../cli/base-command.js'
import { DaemonControl } from '../../runtime/client/daemon-control.js'

export default class DaemonStop extends TuttiCommand {
  static override hidden = true
  static override summary = 'Stop the daemon politely (revokes every session token), then TERM, then KILL'
  static override examples = ['<%= config.bin %> daemon stop']

  async run() {
    await this.parse(DaemonStop)
    const result = await new DaemonControl(this.paths).stop()
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
