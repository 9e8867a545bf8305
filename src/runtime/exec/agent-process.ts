import { spawn } from 'node:child_process'
import os from 'node:os'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { AgentCommand } from './agent-command.js'
import type { SignalRelay } from './signal-relay.js'

/** A shell's status for a process a signal ended: 128 + the signal's number. */
export function statusOfSignal(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0)
}

/**
 * Run the agent with our stdio (no shell, no pipes in between), the relay
 * passing signals on, until it exits. Resolves with its status as a shell
 * reports it: the exit code, or 128 + n for a signal death.
 */
export function runAgent(
  command: AgentCommand,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  relay: SignalRelay,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, args, { argv0: command.argv0, env, stdio: 'inherit' })
    child.once('error', (err: NodeJS.ErrnoException) => {
      // found and executable a moment ago (agent-command.ts): gone or changed since
      reject(
        new TuttiError(
          ErrorCodes.ARGUMENT_INVALID,
          `the agent executable ${command.argv0} could not be started: ${err.code ?? err.message}`,
        ),
      )
    })
    child.once('spawn', () => relay.attach(child))
    child.once('exit', (code, signal) => resolve(code ?? (signal ? statusOfSignal(signal) : 1)))
  })
}
