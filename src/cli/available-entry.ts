import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Connectors } from '../runtime/client/connectors.js'
import { TOKEN_ENV } from '../runtime/names.js'
import { statePaths, type StatePaths } from '../runtime/paths.js'
import { errorOutput, failureOf, jsonText, OutputRedactor } from './command-output.js'

/**
 * `tutti connector available [--json]` without oclif: agents run it at the
 * start of every session, and loading oclif costs more than the answer
 * itself. It answers only when oclif would do nothing but run the command,
 * and prints through the same functions (command-output.ts), so stdout,
 * stderr and the exit code are oclif's to the byte. Anything else goes to
 * oclif unchanged: other argv (`--help`, an unknown flag, an argument, a
 * typo) and the settings below.
 */

/** package.json's `oclif.dirname` (and bin): what oclif scopes its variables and directories by. */
export const OCLIF_DIRNAME = 'tutti'

/**
 * Variables that change what oclif prints or enables for this command:
 * `TUTTI_CONTENT_TYPE=json` turns on JSON without the flag, the debug ones
 * print to stderr, and oclif drops `TUTTI_REDIRECTED` from the environment
 * the daemon would inherit.
 */
const OCLIF_VARIABLES = ['TUTTI_CONTENT_TYPE', 'TUTTI_DEBUG', 'TUTTI_REDIRECTED', 'DEBUG', 'CLI_FLAGS_DEBUG'] as const

/** The argv this entry answers: exactly the public command, with `--json` or without. */
export function leanArgv(argv: readonly string[]): { json: boolean } | undefined {
  if (argv[0] !== 'connector' || argv[1] !== 'available') return undefined
  if (argv.length === 2) return { json: false }
  if (argv.length === 3 && argv[2] === '--json') return { json: true }
  return undefined
}

/** Where oclif looks for user-installed plugins (which could add hooks or replace the command). */
export function oclifUserPlugins(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const windows = platform === 'win32'
  const windowsHome = (env.HOMEDRIVE && env.HOMEPATH && path.join(env.HOMEDRIVE, env.HOMEPATH)) || env.USERPROFILE
  const home = env.HOME || (windows && windowsHome) || os.homedir() || os.tmpdir()
  const dataDir =
    env.TUTTI_DATA_DIR ||
    path.join(env.XDG_DATA_HOME || (windows && env.LOCALAPPDATA) || path.join(home, '.local/share'), OCLIF_DIRNAME)
  return path.join(dataDir, 'package.json')
}

/** Why oclif must answer instead, or undefined when this entry answers exactly as it would. */
export function oclifNeeded(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const set = OCLIF_VARIABLES.find((name) => env[name])
  if (set) return `${set} is set`
  try {
    // oclif asks the user database for the shell when SHELL is unset, and fails when there is no entry
    if (env.SHELL === undefined) os.userInfo()
    if (existsSync(oclifUserPlugins(env))) return 'oclif user plugins may be installed'
  } catch {
    // the failed lookup is the answer: the full oclif CLI runs instead and reports it
    return 'oclif would fail to find the home directory or the shell'
  }
  return undefined
}

// oclif swallows EPIPE on stdout (a reader such as `head` went away) and rethrows anything else
function ignoreClosedStdout(err: NodeJS.ErrnoException): void {
  if (err?.code === 'EPIPE') return
  throw err
}

/**
 * Answers `connector available` when `argv` is exactly that command and
 * nothing oclif does differs; returns false (having printed nothing and
 * changed nothing) when oclif has to answer.
 */
export async function answerAvailable(argv: readonly string[]): Promise<boolean> {
  const lean = leanArgv(argv)
  if (!lean || oclifNeeded()) return false
  let paths: StatePaths
  try {
    paths = statePaths()
  } catch {
    // oclif's path reports this through its own error handler
    return false
  }
  process.stdout.on('error', ignoreClosedStdout)
  const redactor = new OutputRedactor(() => ({ credentials: paths.credentialsJson, grants: paths.oauthGrantsJson }))
  try {
    const result = await new Connectors(paths).available(process.env[TOKEN_ENV] || undefined)
    // the table's modules only for the table
    process.stdout.write(
      lean.json
        ? jsonText(result, redactor)
        : redactor.redact((await import('./available-table.js')).renderAvailable(result)),
    )
  } catch (err) {
    // reported below like any command's failure: on stderr (or as JSON), with its exit code
    const failure = failureOf(err)
    const { stream, text } = errorOutput(err as Error, failure, lean.json, redactor)
    process.exitCode = failure.exit
    process[stream].write(text)
  }
  return true
}
