import { spawn } from 'node:child_process'

/** How much of a command's stderr is kept: its last lines say what went wrong. */
const STDERR_TAIL_BYTES = 16 * 1024

export interface CommandOutcome {
  /** The exit code; 128 for a signal death, 127 when it could not be started. */
  code: number
  /** Everything it printed on stdout, when asked for. */
  stdout: string
  /** The tail of its stderr. */
  stderr: string
}

/**
 * Run a tool of the user's (npm) to completion, no shell, stdin closed:
 * the outcome, never a throw, so the caller words the failure.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; captureStdout?: boolean },
): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', options.captureStdout ? 'pipe' : 'ignore', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES)
    })
    child.once('error', (err) => resolve({ code: 127, stdout, stderr: err.message }))
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }))
  })
}
