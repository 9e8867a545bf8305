import { Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { viewFlags, viewOptions } from '../../cli/view-flags.js'
import { ErrorCodes, TuttiError } from '../../runtime/errors.js'
import { EXEC_PROVIDERS, execSession } from '../../runtime/exec/session-exec.js'

export default class SessionExec extends TuttiCommand {
  static override hidden = true
  static override summary =
    "Run an agent with the connectors: prepare its session, start it with the provider's projection, revoke the " +
    'session when it exits'
  static override description =
    `Everything after \`--\` is the agent's command line, run without a shell. A bare name is looked up on PATH, ` +
    `then in node_modules/.bin from the working directory up. claude gets --mcp-config and --add-dir right after ` +
    `its own word, behind a wrapper too (env X=1 claude, npx, node script.js); in a command string (sh -c) it finds ` +
    `them through a session-private claude first on PATH; codex and tutti-agent get a session CODEX_HOME; all get ` +
    `PATH with the connector commands and the session token in TUTTI_CONNECTOR_TOKEN. ` +
    `The agent's stdio, signals and exit status are its own. ` +
    `While it runs, a daemon that dies or stops is started again on the same port, so its token keeps working. ` +
    `If the session cannot be prepared, the agent starts without connectors after one warning line.`
  // the agent's argv is split off at `--` before oclif sees the rest (oclif's argv reorders repeated words)
  static override strict = true
  static override flags = {
    provider: Flags.string({ description: `agent provider: ${EXEC_PROVIDERS.join(', ')}`, required: true }),
    workspace: Flags.string({ description: 'workspace id the session belongs to (default: the working directory)' }),
    session: Flags.string({ description: 'agent session id (default: a fresh random id)' }),
    ...viewFlags,
    ttl: Flags.string({
      description: 'the token also expires after this long, e.g. 90m, 12h, 7d (default: it ends when the agent exits)',
    }),
  }
  static override examples = [
    '<%= config.bin %> session exec --provider claude -- claude',
    '<%= config.bin %> session exec --provider codex --session task-1 -- codex exec "fix the tests"',
    '<%= config.bin %> session exec --provider claude -- env ANTHROPIC_MODEL=claude-sonnet-4-5 npx claude',
    '<%= config.bin %> session exec --provider claude --connectors github -- claude',
  ]

  async run() {
    const split = this.argv.indexOf('--')
    if (split < 0)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        'give the agent command after `--`, for example `tutti session exec --provider claude -- claude`',
      )
    const agentArgv = this.argv.slice(split + 1)
    const { flags } = await this.parse(SessionExec, this.argv.slice(0, split))
    process.exitCode = await execSession({
      provider: flags.provider,
      argv: agentArgv,
      workspace: flags.workspace,
      session: flags.session,
      ...viewOptions(flags),
      ttl: flags.ttl,
      stateDir: this.paths.root,
      warn: (line) => process.stderr.write(`${this.redact(line)}\n`),
    })
  }
}
