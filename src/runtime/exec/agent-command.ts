import fs from 'node:fs'
import path from 'node:path'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import { PATH_LOOKUP_WRAPPERS, placeAgent, type AgentPlace } from './agent-wrappers.js'

/** What `session exec` runs: the executable found, and the argv the agent was given. */
export interface AgentCommand {
  /** The absolute path that is started. */
  readonly file: string
  /** argv[0] as the user wrote it (a program may look at its own name). */
  readonly argv0: string
  readonly args: readonly string[]
  /** Where the agent itself is in `args` (behind a wrapper or not), or that a command string hides it. */
  readonly place: AgentPlace
}

const bad = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    // absent or not accessible: not an executable, and the caller says so
    return false
  }
}

/**
 * `name` in `node_modules/.bin` of `cwd` or of a directory above it, the
 * nearest first, as npm finds a package's own commands in a clone.
 */
export function findInNodeModules(name: string, cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'node_modules', '.bin', name)
    if (executable(file)) return file
    if (path.dirname(dir) === dir) return undefined
  }
}

/** A bare command name as a shell would find it (PATH), else in the nearest `node_modules/.bin`. */
export function findCommand(name: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const found = which.sync(name, { path: env.PATH ?? '', nothrow: true })
  return found ? path.resolve(cwd, found) : findInNodeModules(name, cwd)
}

/**
 * The agent's executable, found before anything is prepared: a command that
 * cannot start never costs a session token. A name with a slash is a path
 * (from `cwd`); anything else is looked up on PATH, as a shell would, then in
 * `node_modules/.bin` from `cwd` up. Behind a wrapper that itself looks on
 * PATH (`env X=1 claude`), an agent found only in `node_modules/.bin` is
 * passed on by its path.
 */
export function resolveAgentCommand(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): AgentCommand {
  const [argv0, ...rest] = argv
  if (argv0 === undefined || argv0 === '')
    throw bad(
      'nothing to run after `--`: give the agent command, for example `tutti session exec --provider claude -- claude`',
    )
  const args = [...rest]
  const place = placeAgent(argv0, args)
  if (place.kind === 'word' && place.via !== undefined && PATH_LOOKUP_WRAPPERS.has(place.via)) {
    const word = args[place.index]!
    if (!word.includes('/') && !which.sync(word, { path: env.PATH ?? '', nothrow: true })) {
      const local = findInNodeModules(word, cwd)
      if (local) args[place.index] = local
    }
  }
  if (argv0.includes('/')) {
    const file = path.resolve(cwd, argv0)
    if (!fs.existsSync(file)) throw bad(`the agent executable ${argv0} does not exist`)
    if (!executable(file)) throw bad(`the agent executable ${argv0} is not an executable file`)
    return { file, argv0, args, place }
  }
  const found = findCommand(argv0, env, cwd)
  if (!found) throw bad(`the agent executable ${argv0} was not found on PATH nor in node_modules/.bin`)
  return { file: found, argv0, args, place }
}
