import { Args, Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { keyFlags, readKeys } from '../../cli/key-flags.js'
import { describeState, outcomeFlags, outcomeWait } from '../../cli/outcome-flags.js'
import { Connectors } from '../../runtime/client/connectors.js'
import { nameList, type ToolFlags } from '../../runtime/client/connector-visibility.js'
import { ErrorCodes, TuttiError } from '../../runtime/errors.js'
import { SIGN_IN_WAIT_MS } from '../../runtime/oauth/sign-in-timeout.js'

function parsePairs(flag: string, pairs: readonly string[], into: Record<string, string>): void {
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    if (eq <= 0)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `${flag} expects NAME=VALUE, got "${pair.slice(0, Math.max(eq, 0)) || '(no name)'}=…"`,
      )
    into[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
}

/** `--client-secret-from-env NAME`: the secret is read here, so it is never in argv. */
function clientSecret(name: string | undefined): { clientSecret?: string } {
  if (name === undefined) return {}
  const value = process.env[name]
  if (value === undefined)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `--client-secret-from-env ${name}: the variable is not set in this environment`,
    )
  return { clientSecret: value }
}

/** The tool flags, if any was given. */
function toolFlags(flags: {
  tools?: string[]
  'hide-tools'?: string[]
  'all-tools'?: boolean
  'always-load'?: string[]
}): ToolFlags | undefined {
  const out: ToolFlags = {}
  const tools = nameList(flags.tools)
  const hide = nameList(flags['hide-tools'])
  const always = nameList(flags['always-load'])
  if (tools) out.tools = tools
  if (hide) out.hideTools = hide
  if (flags['all-tools']) out.allTools = true
  if (always) out.alwaysLoad = always
  return Object.keys(out).length ? out : undefined
}

/** `; 2 tools (7 hidden)` after a filter change. */
function toolsLine(r: {
  tools?: { changed: boolean }
  state?: { status: string; tools: number; hiddenTools?: number }
}): string {
  if (!r.tools) return ''
  const s = r.state?.status === 'ready' ? r.state : undefined
  const hidden = s?.hiddenTools ? ` (${s.hiddenTools} hidden)` : ''
  const counts = s ? `${s.tools} tool${s.tools === 1 ? '' : 's'}${hidden}` : ''
  return r.tools.changed ? `; tool filter set${counts ? `: ${counts}` : ''}` : '; tool filter unchanged'
}

export default class ConnectorConnect extends TuttiCommand {
  static override hidden = true
  static override summary =
    "Store a connector's credentials (never printed) and settings, or sign in to an OAuth connector, and resolve " +
    'its command again'
  static override description = `With no flags it re-resolves the stdio command against this shell's PATH and retries
the connector.
A connector whose manifest tutti generated (npm, plugin, server.json, command, URL) gets a new release generation that
declares a NAME it lacks; a tutti release must declare it in its tutti-connector.json (auth.variables or config).`
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override flags = {
    ...keyFlags('NAME=VALUE of a declared credential or setting (a generated manifest declares a new NAME)'),
    set: Flags.string({
      description: 'NAME=VALUE of a declared config setting (a secret one is kept with the credentials)',
      multiple: true,
      default: [],
    }),
    browser: Flags.string({
      description:
        'OAuth connectors: the command that opens the sign-in URL ' +
        '(default: $BROWSER, else xdg-open/open, else print only)',
    }),
    'client-id': Flags.string({
      description:
        'OAuth connectors: the id of a client registered with the authorization server beforehand (instead of the ' +
        "manifest's auth.clientId)",
    }),
    'client-secret-from-env': Flags.string({
      description:
        "OAuth connectors: read that pre-registered client's secret from this variable " +
        '(kept 0600 with the tokens, never printed)',
      helpValue: 'NAME',
    }),
    'sign-in-timeout': Flags.integer({
      description: 'OAuth connectors: seconds to wait for the browser to come back',
      default: SIGN_IN_WAIT_MS / 1000,
      min: 1,
      max: 3600,
    }),
    tools: Flags.string({
      description: 'serve only these tools (upstream or published names, comma-separated); replaces any filter',
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'A,B',
    }),
    'hide-tools': Flags.string({
      description: 'serve every tool but these (comma-separated); replaces any filter',
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'X,Y',
    }),
    'all-tools': Flags.boolean({ description: "serve every tool: clears your filter and the manifest's" }),
    'always-load': Flags.string({
      description: 'mark these tools for clients to load in full, not behind their tool search ("" clears)',
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'A,B',
    }),
    ...outcomeFlags,
  }
  static override examples = [
    'GITHUB_TOKEN=... <%= config.bin %> connector connect github --from-env GITHUB_TOKEN',
    '<%= config.bin %> connector connect weather --env WEATHER_API_KEY=abc123',
    '<%= config.bin %> connector connect slack --secret SLACK_BOT_TOKEN --env SLACK_TEAM_ID=T0123',
    '<%= config.bin %> connector connect files --set ROOT_DIR=/srv/docs',
    '<%= config.bin %> connector connect linear --browser firefox',
    '<%= config.bin %> connector connect github --tools search_issues,get_issue --always-load search_issues',
    '<%= config.bin %> connector connect github --hide-tools delete_repository',
    '<%= config.bin %> connector connect github --all-tools',
    'CLIENT_SECRET=... <%= config.bin %> connector connect jira ' +
      '--client-id tutti-cli --client-secret-from-env CLIENT_SECRET',
  ]

  async run() {
    const { args, flags } = await this.parse(ConnectorConnect)
    const settings: Record<string, string> = {}
    parsePairs('--set', flags.set, settings)
    const keys = await readKeys(flags)
    const client = {
      ...(flags['client-id'] !== undefined ? { clientId: flags['client-id'] } : {}),
      ...clientSecret(flags['client-secret-from-env']),
    }
    // the sign-in URL goes to stderr, also with --json: stdout stays the one JSON document
    const signIn = {
      timeoutMs: flags['sign-in-timeout'] * 1000,
      print: (line: string) => process.stderr.write(`${this.redact(line)}\n`),
      ...(flags.browser ? { browser: flags.browser } : {}),
      client,
    }
    const tools = toolFlags(flags)
    const request = { keys, settings, signIn, ...outcomeWait(flags), ...(tools ? { tools } : {}) }
    const result = await new Connectors(this.paths).connect(args.key, request)
    if (result.tools?.checkedAgainst === 'none')
      process.stderr.write(
        `note: ${args.key} has not listed its tools yet, so the names were stored unchecked; ` +
          '`tutti daemon status` names any that match no tool once it has\n',
      )
    if (!this.jsonEnabled()) this.log(`connected ${result.key} (${describeState(result.state)})${toolsLine(result)}`)
    return result
  }
}
