import { TuttiCommand } from '../../cli/base-command.js'
import { runDoctor } from '../../runtime/doctor/doctor.js'

export default class DaemonDoctor extends TuttiCommand {
  static override hidden = true
  static override summary =
    'Check that every facade (available, MCP in both eras, shims, Skill roots, declared tools) agrees with the registry'
  static override description =
    'Exits 0 when everything agrees and 1 when anything disagrees; each finding names a concrete fix.'
  static override examples = ['<%= config.bin %> daemon doctor', '<%= config.bin %> daemon doctor --json']

  async run() {
    await this.parse(DaemonDoctor)
    const report = await runDoctor(this.paths)
    if (!this.jsonEnabled()) {
      const c = report.checked
      if (report.ok)
        this.log(
          `all facades agree: ${c.connectors} connectors, ${c.tools} tools in both eras, ` +
            `${c.shims} shims, ${c.skillRoots} Skill roots`,
        )
      for (const f of report.findings)
        this.log(`✗ [${f.check}]${f.connector ? ` ${f.connector}:` : ''} ${f.problem}\n  fix: ${f.fix}`)
    }
    if (!report.ok) process.exitCode = 1
    return report
  }
}
