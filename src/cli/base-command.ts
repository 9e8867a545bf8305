import { Command, Errors } from '@oclif/core'
import { ErrorCodes, isTuttiError } from '../runtime/errors.js'
import { readFileSync } from 'node:fs'
import { format } from 'node:util'
import { REDACTED } from '../runtime/log/redactor.js'
import { statePaths, type StatePaths } from '../runtime/paths.js'

/** Values of credentials.json (at least 4 chars, as the daemon's redactor tracks them). */
function storedSecrets(file: string): string[] {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { connectors?: Record<string, Record<string, unknown>> }
    return Object.values(doc.connectors ?? {})
      .flatMap((vars) => Object.values(vars ?? {}))
      .filter((v): v is string => typeof v === 'string' && v.length >= 4)
  } catch {
    return []
  }
}

interface OclifExit {
  oclif?: { exit?: number }
}

/**
 * Shared base of every tutti command: `--json`, one state directory, and one
 * error shape: `{"error":{"code","message"}}` with exit 2 for bad input and
 * 1 for failures.
 */
export abstract class TuttiCommand extends Command {
  static override enableJsonFlag = true

  protected get paths(): StatePaths {
    return statePaths()
  }

  private secrets?: string[]

  /**
   * Every stored credential, by exact value: no output of any command
   * carries one, whatever an upstream echoed into a message (the daemon
   * redacts its answers too; this covers what the CLI itself prints).
   */
  protected redact(text: string): string {
    this.secrets ??= storedSecrets(this.paths.credentialsJson)
    let out = text
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
    return out
  }

  /** Human output (tables, status lines), redacted. */
  protected out(text: string): void {
    process.stdout.write(this.redact(text))
  }

  override log(message = '', ...args: unknown[]): void {
    super.log(this.redact(format(message, ...args)))
  }

  override logJson(json: unknown): void {
    process.stdout.write(`${this.redact(JSON.stringify(json, null, 2))}\n`)
  }

  protected override async catch(err: Error & OclifExit): Promise<void> {
    if (err instanceof Errors.ExitError) throw err
    let code: string
    let exit: number
    if (isTuttiError(err)) {
      code = err.code
      exit = err.exitCode
    } else if (err instanceof Errors.CLIError && err.oclif?.exit === 2) {
      code = ErrorCodes.ARGUMENT_INVALID
      exit = 2
    } else {
      code = ErrorCodes.INTERNAL
      exit = 1
    }
    const message = this.redact(err.message.replace(/\n\s*See more help with --help$/, ''))
    process.exitCode = exit
    if (this.jsonEnabled()) {
      process.stdout.write(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`)
    } else {
      process.stderr.write(`tutti: ${message}\n`)
    }
  }
}
