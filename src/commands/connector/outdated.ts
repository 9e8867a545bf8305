import { Args } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'

export default class ConnectorOutdated extends TuttiCommand {
  static override hidden = true
  static override strict = false
  static override summary = 'Compare connectors installed from npm: or a server.json with the registry'
  static override description = `Each connector installed from npm:<name>[@<version|range|tag>], or from a
server.json whose server is an npm package, is compared with the registry through your npm (one metadata query
each, no download). "wanted" is what \`connector update\` installs: what the npm: spec resolves to now, or a
newer latest version of the server.json's package (its "installed" is the package version). "latest" is the
registry's latest tag. Connectors from other sources are not listed.`
  static override args = { key: Args.string({ description: 'connector keys (default: all)' }) }
  static override examples = [
    '<%= config.bin %> connector outdated',
    '<%= config.bin %> connector outdated memory --json',
  ]

  async run() {
    const { argv } = await this.parse(ConnectorOutdated)
    const { outdatedConnectors } = await import('../../runtime/install/outdated.js')
    const keys = argv.length ? (argv as string[]) : undefined
    const rows = await outdatedConnectors(this.paths, process.env, keys)
    const connectors = rows.map(({ origin: _origin, ...row }) => row)
    if (!this.jsonEnabled()) {
      if (!rows.length) this.log('no connector installed from npm: or a server.json to compare')
      const cells = rows.map((r) => [r.key, r.installed, r.wanted ?? '?', r.latest ?? '?', r.source])
      const table = [['key', 'installed', 'wanted', 'latest', 'source'], ...cells]
      const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)))
      const print = (line: string[]) =>
        this.log(
          line
            .map((cell, i) => cell.padEnd(widths[i]!))
            .join('  ')
            .trimEnd(),
        )
      if (rows.length) table.forEach(print)
      for (const r of rows) if (r.error) process.stderr.write(`${r.key}: ${r.error}\n`)
    }
    return { connectors }
  }
}
