import { TuttiCommand } from '../../cli/base-command.js'

export default class DaemonRun extends TuttiCommand {
  static override hidden = true
  static override summary = 'Run the daemon in the foreground (logs go to daemon.log in the state directory)'
  static override examples = ['TUTTI_STATE_DIR=/tmp/tutti <%= config.bin %> daemon run']

  async run() {
    await this.parse(DaemonRun)
    const { runDaemon } = await import('../../runtime/daemon/main.js')
    const daemon = await runDaemon()
    if (!this.jsonEnabled()) this.log(`daemon ${process.pid} listening on 127.0.0.1:${daemon.port}; Ctrl-C stops it`)
    await daemon.stopped
    return { pid: process.pid, stopped: true }
  }
}
