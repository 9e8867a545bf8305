import fs from 'node:fs'
import path from 'node:path'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'

/** What `session exec` runs: the executable found, and the argv the agent was given. */
export interface AgentCommand {
  /** The absolute path that is started. */
  readonly file: string
  /** argv[0] as the user wrote it (a program may look at its own name). */
  readonly argv0: string
  readonly args: readonly string[]
}

const bad = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The agent's executable, found before anything is prepared: a command that
 * cannot start never costs a session token. A name with a slash is a path
 * (from `cwd`); anything else is looked up on PATH, as a shell would.
 */
export function resolveAgentCommand(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): AgentCommand {
  const [argv0, ...args] = argv
  if (argv0 === undefined || argv0 === '') throw bad('nothing to run after `--`: give the agent command, for example `tutti session exec --provider claude -- claude`')
  if (argv0.includes('/')) {
    const file = path.resolve(cwd, argv0)
    if (!fs.existsSync(file)) throw bad(`the agent executable ${argv0} does not exist`)
    if (!executable(file)) throw bad(`the agent executable ${argv0} is not an executable file`)
    return { file, argv0, args }
  }
  const found = which.sync(argv0, { path: env.PATH ?? '', nothrow: true })
  if (!found) throw bad(`the agent executable ${argv0} was not found on PATH`)
  return { file: path.resolve(cwd, found), argv0, args }
}
