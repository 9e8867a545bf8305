import { Command, Errors } from '@oclif/core'
import { format } from 'node:util'
import { ErrorCodes, isTuttiError, TuttiError } from '../runtime/errors.js'
import { statePaths, type StatePaths } from '../runtime/paths.js'
import { errorOutput, failureOf, jsonText, OutputRedactor, type Failure } from './command-output.js'
import { unknownFlagMessage, type KnownFlag } from './unknown-flag.js'

interface OclifExit {
  oclif?: { exit?: number }
  /** oclif's NonExistentFlagsError: the flags as typed. */
  flags?: unknown
}

/** oclif's "Nonexistent flag" error, told by its shape: the parser's error classes are not exported. */
const isUnknownFlagError = (err: Error & OclifExit): err is Error & { flags: string[] } =>
  err instanceof Errors.CLIError && Array.isArray((err as OclifExit).flags) && /^Nonexistent flags?:/.test(err.message)

/**
 * Shared base of every tutti command: `--json`, one state directory, and one
 * error shape: `{"error":{"code","message"}}` with exit 2 for bad input and
 * 1 for failures (command-output.ts, which the lean `connector available`
 * entry prints through too).
 */
export abstract class TuttiCommand extends Command {
  static override enableJsonFlag = true

  protected get paths(): StatePaths {
    return statePaths()
  }

  private readonly redactor = new OutputRedactor(() => ({
    credentials: this.paths.credentialsJson,
    grants: this.paths.oauthGrantsJson,
  }))

  /** Every stored credential, by exact value (command-output.ts). */
  protected redact(text: string): string {
    return this.redactor.redact(text)
  }

  /** Human output (tables, status lines), redacted. */
  protected out(text: string): void {
    process.stdout.write(this.redact(text))
  }

  override log(message = '', ...args: unknown[]): void {
    super.log(this.redact(format(message, ...args)))
  }

  override logJson(json: unknown): void {
    process.stdout.write(jsonText(json, this.redactor))
  }

  protected override async catch(err: Error & OclifExit): Promise<void> {
    if (err instanceof Errors.ExitError) throw err
    // oclif's own parse errors (unknown flag, missing argument) are bad input
    const badInput = !isTuttiError(err) && err instanceof Errors.CLIError && err.oclif?.exit === 2
    const failure: Failure = badInput ? { code: ErrorCodes.ARGUMENT_INVALID, exit: 2 } : failureOf(err)
    // the command did parse, and the parse refused the input: not oclif's "did not parse its arguments"
    if (badInput) this.parsed = true
    const shown = isUnknownFlagError(err)
      ? new TuttiError(ErrorCodes.ARGUMENT_INVALID, unknownFlagMessage(err.flags, this.knownFlags(), this.usage()))
      : err
    const { stream, text } = errorOutput(shown, failure, this.jsonEnabled(), this.redactor)
    process.exitCode = failure.exit
    process[stream].write(text)
  }

  /** Every flag this command takes, `--json` included. */
  private knownFlags(): KnownFlag[] {
    const ctor = this.ctor
    const all = { ...(ctor.enableJsonFlag ? { json: {} } : {}), ...ctor.baseFlags, ...ctor.flags }
    return Object.entries(all).map(([name, f]) => ({ name, hidden: (f as { hidden?: boolean }).hidden === true }))
  }

  /** `tutti connector install`, as the user types it. */
  private usage(): string {
    return [this.config.bin, ...(this.id ?? '').split(':').filter(Boolean)].join(' ')
  }
}
