import { Args, Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { keyFlags, readKeys } from '../../cli/key-flags.js'
import { describeState, outcomeFlags, outcomeWait } from '../../cli/outcome-flags.js'
import { Connectors } from '../../runtime/client/connectors.js'
import { ErrorCodes, TuttiError } from '../../runtime/errors.js'
import { describeInstallChange } from '../../runtime/install/install-change.js'
import { installScriptLines } from '../../cli/install-script-lines.js'
import { CLIENTS } from '../../runtime/sources/client-configs/client-entry.js'
import { importsConfig, runConfigImport } from '../../cli/config-import-command.js'

export default class ConnectorInstall extends TuttiCommand {
  static override hidden = true
  static override strict = false
  static override summary =
    'Install a connector from a tutti release, an npm package, a plugin, a server.json, a command or a URL'
  static override description = `<source> is any of:
  a directory or .tgz with tutti-connector.json
  npm:<name>[@<version|range>]   an npm MCP server (one "bin"), fetched with your npm
  a directory or .tgz without a tutti manifest: an npm package with one bin, or a Claude Code, Codex or Agent \
Plugins package
  a server.json file (MCP Registry)
  an MCP config file (.mcp.json, mcp.json): each of its servers becomes a connector
  https://host/path   a remote MCP server; --header "Name: value" sends a header (its value is a credential)
  none: the words after "--" are a stdio server's command and arguments (--key names it; npx/uvx/bunx/pnpm dlx
    lines default to the package's name). The command is looked up on PATH and recorded; ./relative paths become
    absolute.
--from claude|claude-desktop|codex|cursor|vscode|gemini imports the servers of that client's user and project configs
(--project DIR); --json-entry FILE|- one entry, named by --key. Literal secrets in them are stored as credentials.
With a source, arguments after "--" are appended to the server's arguments (a directory for a filesystem server).
A URL's key defaults to its host's main label, without the top-level domain and mcp/api/www labels (mcp.linear.app is
"linear"); an IP address needs --key.
--env NAME=VALUE, --from-env NAME and --secret NAME give the server a variable: a credential (stored 0600, never
printed) when --secret or a name like *TOKEN*, *KEY*, *SECRET*, *PASSWORD*, *AUTH*, else a setting. A manifest tutti
generates declares it; a tutti release must declare it itself (auth.variables or config).
npm dependencies are installed into the release with your npm, without their install scripts unless --allow-scripts
(or the manifest's npm.scripts) consents; --dry-run lists the packages that have them. The choice is kept by update.
A stdio command is resolved against this shell's PATH and recorded. The command waits for the connector's outcome \
and exits 1 with the reason if it is not ready.
A key installed from another package (another npm name, plugin, server.json or release) exits 2 naming both, unless
--replace: the new one then starts without the old one's credentials, settings, OAuth grant and data, which are kept
in connectors/<key>/replaced/ (--purge deletes them instead). A new version of the same package keeps them.`
  static override args = {
    source: Args.string({
      description:
        'a release directory or .tgz, npm:<spec>, a plugin or package directory, a server.json file, ' +
        'an MCP config file (.mcp.json) or an http(s) URL; none for a command after "--"',
      // stdin belongs to --secret and --json-entry -, never to the source
      ignoreStdin: true,
    }),
  }
  static override flags = {
    ...outcomeFlags,
    key: Flags.string({
      description: 'the connector key, for a source without a tutti manifest (default: from its name or host)',
    }),
    server: Flags.string({ description: 'which MCP server of a plugin or server.json with several' }),
    'dry-run': Flags.boolean({
      description: 'print the manifest the connector would be installed with, and change nothing',
    }),
    replace: Flags.boolean({
      description: 'replace the connector of another package installed under the key (nothing of it is carried over)',
    }),
    purge: Flags.boolean({
      description: 'with --replace: delete what the replaced connector leaves instead of keeping it aside',
    }),
    'allow-scripts': Flags.boolean({
      description: 'run the npm install scripts of the package and its dependencies (native modules)',
    }),
    from: Flags.string({
      description: "import every MCP server of a client's config, each as a connector",
      options: [...CLIENTS],
    }),
    'json-entry': Flags.string({
      description:
        'import one server entry (JSON, as `claude mcp add-json` takes it) from FILE, or - for stdin; ' +
        'its name is --key',
    }),
    project: Flags.string({
      description: 'with --from: the project whose configs are read (default: the working directory)',
    }),
    only: Flags.string({ description: 'with --from or a config file: import only these servers (NAME,NAME…)' }),
    ...keyFlags('NAME=VALUE for the server: a credential if NAME looks like one, else a setting'),
    header: Flags.string({
      description: 'a URL source: an HTTP header sent to the server (its value is stored as a credential)',
      multiple: true,
      multipleNonGreedy: true,
      default: [],
      helpValue: '"Name: value"',
    }),
  }
  static override examples = [
    '<%= config.bin %> connector install ./examples/connectors/notes --json',
    '<%= config.bin %> connector install npm:@modelcontextprotocol/server-memory',
    '<%= config.bin %> connector install npm:@modelcontextprotocol/server-filesystem -- ~/projects',
    '<%= config.bin %> connector install ./server.json --server npm --dry-run --json',
    '<%= config.bin %> connector install npm:@modelcontextprotocol/server-slack --secret SLACK_BOT_TOKEN ' +
      '--env SLACK_TEAM_ID=T1',
    '<%= config.bin %> connector install --key every -- npx -y @modelcontextprotocol/server-everything',
    '<%= config.bin %> connector install https://mcp.example.com/mcp --header "Authorization: Bearer $EXAMPLE_TOKEN"',
    '<%= config.bin %> connector install --from claude --dry-run',
    '<%= config.bin %> connector install --from codex --only github,memory',
    '<%= config.bin %> connector install ./.mcp.json',
  ]

  async run() {
    const { args, argv, flags } = await this.parse(ConnectorInstall)
    const dashes = this.argv.indexOf('--')
    const extra = dashes === -1 ? [] : this.argv.slice(dashes + 1)
    // nothing before "--" but flags: the words after it are the server's command (oclif took the first as the source)
    const commandForm = dashes !== -1 && argv.length === extra.length
    if (!commandForm && (await importsConfig(args.source, flags))) {
      const context = { paths: this.paths, json: this.jsonEnabled(), log: (t: string) => this.log(t) }
      return runConfigImport(context, args.source, flags, extra.length)
    }
    // only the source may stand before "--": anything else is a typo, not a server argument
    if (!commandForm && argv.length !== 1 + extra.length) {
      const message =
        argv.length === 0
          ? 'give a source (a package, a server.json, a config file, a URL), a command after "--", or --from CLIENT'
          : `unexpected argument "${String(argv[1])}"; server arguments go after "--"`
      throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)
    }
    const source = commandForm ? undefined : args.source
    const keys = await readKeys(flags)
    const notice = (line: string) => process.stderr.write(`${line}\n`)
    // progress only for a person watching: it goes to stderr, and never in --json mode
    const progress = process.stderr.isTTY && !this.jsonEnabled() ? notice : undefined
    const request = {
      ...outcomeWait(flags),
      notice,
      ...(progress ? { progress } : {}),
      ...(flags.key !== undefined ? { key: flags.key } : {}),
      ...(flags.server !== undefined ? { server: flags.server } : {}),
      ...(commandForm ? { command: extra } : { args: extra }),
      headers: flags.header,
      keys,
      replace: flags.replace,
      purge: flags.purge,
      allowScripts: flags['allow-scripts'],
    }
    const connectors = new Connectors(this.paths)
    if (flags['dry-run']) {
      const outcome = await connectors.installDryRun(source, request)
      if (!this.jsonEnabled()) {
        this.log(JSON.stringify(outcome.manifest, null, 2))
        for (const line of installScriptLines(outcome.installScripts)) notice(line)
      }
      return outcome
    }
    const result = await connectors.install(source, request)
    const done = describeInstallChange(result.key, result.change, result.version, result.previousVersion)
    if (!this.jsonEnabled()) this.log(`${done} (${describeState(result.state)})`)
    return result
  }
}
