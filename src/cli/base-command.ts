import { Command, Errors } from '@oclif/core'
import { ErrorCodes, isTuttiError } from '../runtime/errors.js'
import { statePaths, type StatePaths } from '../runtime/paths.js'

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
    const message = err.message.replace(/\n\s*See more help with --help$/, '')
    process.exitCode = exit
    if (this.jsonEnabled()) {
      process.stdout.write(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`)
    } else {
      process.stderr.write(`tutti: ${message}\n`)
    }
  }
}
