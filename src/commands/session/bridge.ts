import { Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { viewFlags, viewOptions } from '../../cli/view-flags.js'
import { runBridge } from '../../runtime/bridge/run-bridge.js'

export default class SessionBridge extends TuttiCommand {
  static override hidden = true
  static override summary =
    'A stdio MCP server "connector" for clients configured with a command: it relays to the tutti daemon and ' +
    'survives its restarts'
  static override description =
    `For a static client config: \`claude mcp add connector -- tutti session bridge\`, ` +
    `\`codex mcp add connector -- tutti session bridge\`, or an mcpServers entry ` +
    `{"command":"tutti","args":["session","bridge"]}. It starts the daemon if needed, takes a session token of its ` +
    `own (never written anywhere), serves 2025-06-18 and 2026-07-28 stdio clients, announces tool changes to both, ` +
    `and after a daemon restart or crash carries on with a new token. Its session is revoked when the client closes ` +
    `stdin or sends SIGTERM.`
  // stdout is the MCP stream: --json would have nothing to add to it
  static override enableJsonFlag = false
  static override flags = {
    workspace: Flags.string({ description: 'workspace id the session belongs to (default: the working directory)' }),
    session: Flags.string({ description: 'session id (default: a fresh random id; give one bridge process per id)' }),
    ...viewFlags,
  }
  static override examples = [
    'claude mcp add connector -- <%= config.bin %> session bridge',
    'codex mcp add connector -- <%= config.bin %> session bridge',
    'claude mcp add github -- <%= config.bin %> session bridge --connectors github',
  ]

  async run() {
    const { flags } = await this.parse(SessionBridge)
    await runBridge({
      stateDir: this.paths.root,
      workspace: flags.workspace,
      session: flags.session,
      ...viewOptions(flags),
      log: (line) => process.stderr.write(`${this.redact(line)}\n`),
    })
  }
}
