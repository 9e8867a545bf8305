import { Command, Errors } from '@oclif/core'
import { format } from 'node:util'
import { ErrorCodes, isTuttiError } from '../runtime/errors.js'
import { statePaths, type StatePaths } from '../runtime/paths.js'
import { errorOutput, failureOf, jsonText, OutputRedactor, type Failure } from './command-output.js'

interface OclifExit {
  oclif?: { exit?: number }
}

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

  private readonly redactor = new OutputRedactor(() => ({ credentials: this.paths.credentialsJson, grants: this.paths.oauthGrantsJson }))

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
    const failure: Failure = !isTuttiError(err) && err instanceof Errors.CLIError && err.oclif?.exit === 2 ? { code: ErrorCodes.ARGUMENT_INVALID, exit: 2 } : failureOf(err)
    const { stream, text } = errorOutput(err, failure, this.jsonEnabled(), this.redactor)
    process.exitCode = failure.exit
    process[stream].write(text)
  }
}
