import { Args, Flags } from '@oclif/core'
import { TuttiCommand } from '../../cli/base-command.js'
import { connectorLogLine } from '../../cli/connector-log-lines.js'
import { ConnectorLogReader } from '../../runtime/client/connector-log-reader.js'
import { ErrorCodes, TuttiError } from '../../runtime/errors.js'
import type { ConnectorLogRecord } from '../../runtime/log/connector-log.js'

/** Enough to see a failed start and what led to it, short enough for one screen. */
const DEFAULT_LINES = 50

/** Checked here, not by oclif's integer flag: its refusal reads "Parsing --lines" in a style of its own. */
function lineCount(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LINES
  const n = Number(text)
  if (/^\d+$/.test(text) && Number.isSafeInteger(n) && n > 0) return n
  throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `--lines takes a positive integer, not "${text}"`)
}

export default class ConnectorLogs extends TuttiCommand {
  static override hidden = true
  static override summary = "Show a connector's log: its server's stderr and tutti's events for it, redacted"
  static override description = [
    'Each line has a time and where it comes from: "stderr" is what the connector\'s MCP server wrote to its stderr,',
    '"tutti" is an event tutti logged about it (started, failed and why, restarted, credentials or release changed,',
    'stopped). Credentials and OAuth tokens are redacted. The log is kept per connector in the state directory,',
    'bounded (1 MiB, rotated once), and removed on uninstall; no daemon needs to run to read it.',
    'With --follow --json each line is printed as one JSON object (NDJSON).',
  ].join(' ')
  static override args = { key: Args.string({ description: 'connector key', required: true }) }
  static override flags = {
    follow: Flags.boolean({ char: 'f', description: 'keep printing new lines as they come, until Ctrl-C' }),
    lines: Flags.string({ char: 'n', description: `how many of the last lines to show (default ${DEFAULT_LINES})` }),
  }
  static override examples = [
    '<%= config.bin %> connector logs memory',
    '<%= config.bin %> connector logs memory --lines 200',
    '<%= config.bin %> connector logs memory --follow',
    '<%= config.bin %> connector logs memory --json',
  ]

  async run() {
    const { args, flags } = await this.parse(ConnectorLogs)
    const count = lineCount(flags.lines)
    const reader = new ConnectorLogReader(this.paths)
    const { records, position } = await reader.last(args.key, count)
    if (!flags.follow) {
      if (!this.jsonEnabled()) for (const r of records) this.log(connectorLogLine(r))
      // a note, not a line of the log: on stderr, so the output stays the log's lines only
      if (!this.jsonEnabled() && !records.length) process.stderr.write(`${args.key} has no log lines yet\n`)
      return { key: args.key, lines: records }
    }
    // --follow --json: one record a line (NDJSON), so a pipe gets each as it comes
    const line = (r: ConnectorLogRecord) => (this.jsonEnabled() ? JSON.stringify(r) : connectorLogLine(r))
    const print = (r: ConnectorLogRecord) => this.out(`${line(r)}\n`)
    records.forEach(print)
    const stop = new AbortController()
    const interrupted = () => stop.abort()
    process.once('SIGINT', interrupted).once('SIGTERM', interrupted)
    // the reader went away (`| head`): nothing more can be shown
    process.stdout.once('error', interrupted)
    try {
      await reader.follow(args.key, position, print, stop.signal)
    } finally {
      process.off('SIGINT', interrupted).off('SIGTERM', interrupted)
      process.stdout.off('error', interrupted)
    }
    return undefined
  }
}
