import { Args, Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { describeState, outcomeFlags, outcomeWait } from '../../cli/outcome-flags.js'
import { ErrorCodes, TuttiError } from '../../runtime/errors.js'

export default class ConnectorUpdate extends TuttiCommand {
  static override hidden = true
  static override strict = false
  static override summary = 'Install the newer version of connectors installed from npm: or a server.json'
  static override description = `Each chosen connector whose npm:<name>[@<range|tag>] spec now resolves to
another version, or whose server.json npm package has a newer latest version, is installed again the way it was
(its --key, --server, arguments after "--" and --allow-scripts): its credentials, settings, OAuth grant and data are
kept. A spec pinned to one version stays there; install npm:<name>@<version> for another. The server.json file is
not changed: installing it again goes back to its pinned version. Exits 1 if any of them failed (the others are
still updated).`
  static override args = { key: Args.string({ description: 'connector keys' }) }
  static override flags = {
    ...outcomeFlags,
    all: Flags.boolean({ description: 'every connector installed from npm: or a server.json npm package' }),
  }
  static override examples = [
    '<%= config.bin %> connector update memory',
    '<%= config.bin %> connector update --all --json',
  ]

  async run() {
    const { argv, flags } = await this.parse(ConnectorUpdate)
    const keys = argv as string[]
    if (!!flags.all === keys.length > 0) {
      const wrong = flags.all
        ? '--all updates every connector: name no key with it'
        : 'name the connectors to update, or --all'
      throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, wrong)
    }
    const { updateConnectors } = await import('../../runtime/client/connector-updates.js')
    const notice = (line: string) => process.stderr.write(`${line}\n`)
    const progress = process.stderr.isTTY && !this.jsonEnabled() ? notice : undefined
    const request = { ...outcomeWait(flags), notice, ...(progress ? { progress } : {}) }
    const outcome = await updateConnectors(this.paths, process.env, request, flags.all ? undefined : keys)
    if (!this.jsonEnabled()) {
      for (const u of outcome.updated) this.log(`updated ${u.key} ${u.from} → ${u.to} (${describeState(u.state)})`)
      for (const c of outcome.current) {
        const latest = c.latest && c.latest !== c.version ? `; latest ${c.latest}` : ''
        this.log(`${c.key} is up to date (${c.version}${latest})`)
      }
      const none = !outcome.updated.length && !outcome.current.length && !outcome.failed.length
      if (none) this.log('no connector installed from npm: or a server.json to update')
    }
    if (outcome.failed.length) {
      const lines = outcome.failed.map((f) => `${f.key}: ${f.error}`).join('\n')
      const count = outcome.failed.length
      throw new TuttiError(ErrorCodes.CONNECTOR_NOT_READY, `${count} of the connectors did not update:\n${lines}`)
    }
    return outcome
  }
}
