import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { prepareRuntime, revokeSessions } from '../client/sessions.js'
import { ErrorCodes, isTuttiError, TuttiError } from '../errors.js'
import { statePaths } from '../paths.js'
import { sessionPrepareMessage } from '../control-protocol/session-prepare.js'
import type { PreparedRuntime } from '../sessions/prepared-runtime.js'
import { removeSessionDirs } from '../sessions/session-dir.js'
import { thisOwner } from '../sessions/session-owner.js'
import { requestedTtl } from '../sessions/session-ttl.js'
import { TOKEN_ENV } from '../names.js'
import { resolveAgentCommand, type AgentCommand } from './agent-command.js'
import { DaemonWatch } from './daemon-watch.js'
import { runAgent, statusOfSignal } from './agent-process.js'
import { CLAUDE_COMMAND, claudeOnPath } from './command-string-projection.js'
import { SignalRelay } from './signal-relay.js'

/**
 * The agents `session exec` starts, and the projection each gets:
 * `claude` its `--mcp-config`/`--add-dir` flags, `codex` and `tutti-agent`
 * (a Codex-based agent: the same projection, DESIGN §10) a session
 * `CODEX_HOME`. ACP agents are not started this way: their client passes the
 * server in `session/new` (`session prepare --provider acp`).
 */
export const EXEC_PROVIDERS = ['claude', 'codex', 'tutti-agent'] as const
export type ExecProvider = (typeof EXEC_PROVIDERS)[number]

export interface ExecOptions {
  provider: string
  /** The agent's argv, everything after `--`. */
  argv: readonly string[]
  /** Defaults: the working directory (its real path), and a fresh random session id. */
  workspace?: string
  session?: string
  /** The session's view: only these connectors, not these (with the workspace's project file, it only narrows). */
  connectors?: string[]
  hideConnectors?: string[]
  /** The session sees this one connector under its server's own names. */
  as?: string
  stateDir: string
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** One line on stderr: the agent's own output is on the same terminal. */
  warn: (line: string) => void
  /** `--ttl`: the token also expires (by default it ends with this process). */
  ttl?: string
}

const bad = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

function execProvider(provider: string): ExecProvider {
  if ((EXEC_PROVIDERS as readonly string[]).includes(provider)) return provider as ExecProvider
  if (provider === 'acp')
    throw bad(
      'an ACP agent gets the connector server from its client in session/new: ' +
        'use `tutti session prepare --provider acp`',
    )
  throw bad(`unknown provider "${provider}": session exec starts ${EXEC_PROVIDERS.join(', ')}`)
}

/** The first line of a reason: the warning is one line. */
const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!

/**
 * `tutti session exec`: prepare the session, run the agent with its
 * projection, and when it exits revoke the session and remove its files.
 * Resolves with the agent's status. Connectors never stop the agent from
 * starting: if the session cannot be prepared it runs plain, after one
 * warning line.
 */
export async function execSession(options: ExecOptions): Promise<number> {
  const provider = execProvider(options.provider)
  const env = options.env ?? process.env
  const cwd = options.cwd ?? process.cwd()
  const workspace = options.workspace ?? fs.realpathSync(cwd)
  const session = options.session ?? randomUUID()
  const ids = sessionPrepareMessage.request.safeParse({ provider, workspace, session })
  if (!ids.success)
    throw bad(`--workspace/--session: ${ids.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`)
  // the token ends with this process (proven gone even after a kill -9); where no start time tells it, by its TTL
  const owner = thisOwner()
  const ttlSeconds = requestedTtl(options.ttl, env, owner !== undefined)
  const command = resolveAgentCommand(options.argv, env, cwd)

  const relay = new SignalRelay()
  relay.start()
  let runtime: PreparedRuntime | undefined
  let watch: DaemonWatch | undefined
  try {
    try {
      runtime = await prepareRuntime({
        provider,
        workspace,
        session,
        stateDir: options.stateDir,
        env,
        ...(owner ? { owner } : {}),
        ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
        ...(options.connectors ? { connectors: options.connectors } : {}),
        ...(options.hideConnectors ? { hideConnectors: options.hideConnectors } : {}),
        ...(options.as !== undefined ? { as: options.as } : {}),
      })
      for (const line of runtime.warnings) options.warn(line)
    } catch (err) {
      // a view that names what is not there is the caller's to fix: the agent does not start with another view
      if (isTuttiError(err) && err.kind === 'input') throw err
      options.warn(
        `tutti: starting ${command.argv0} without connectors: the session could not be prepared (${firstLine(err)})`,
      )
    }
    const early = relay.terminatedEarly
    if (early) return statusOfSignal(early)
    watch = runtime ? watchDaemon(options, runtime) : undefined
    const agentEnv = { ...env, ...runtime?.env }
    if (provider === 'claude' && runtime?.projection.kind === 'claude' && command.place.kind === 'command-string') {
      const bin = await claudeOnPath(runtime.projection, agentEnv, cwd)
      if (bin) agentEnv.PATH = `${bin}${path.delimiter}${agentEnv.PATH ?? ''}`
      else options.warn(`tutti: ${command.argv0} runs without connectors: no ${CLAUDE_COMMAND} for its command string`)
    }
    return await runAgent(command, agentArgs(provider, command, runtime), agentEnv, relay)
  } finally {
    relay.stop()
    await watch?.stop()
    if (runtime) await release(options, workspace, session, owner !== undefined)
  }
}

/** While the agent runs, its daemon is started again should it die or stop (daemon-watch.ts). */
function watchDaemon(options: ExecOptions, runtime: PreparedRuntime): DaemonWatch | undefined {
  const server = runtime.mcpServers[0]
  const token = runtime.env[TOKEN_ENV]
  if (!server || !token) return undefined
  const watch = new DaemonWatch({ paths: statePaths(options.stateDir), url: server.url, token, warn: options.warn })
  watch.start()
  return watch
}

/**
 * Claude Code takes the projection as flags right after its own word, behind
 * a wrapper too (`env X=1 claude --mcp-config …`); in a command string it
 * finds them through PATH. Codex finds its CODEX_HOME in the environment.
 */
function agentArgs(provider: ExecProvider, command: AgentCommand, runtime: PreparedRuntime | undefined): string[] {
  const args = [...command.args]
  if (provider !== 'claude' || runtime?.projection.kind !== 'claude' || command.place.kind !== 'word') return args
  args.splice(command.place.index + 1, 0, ...runtime.projection.args)
  return args
}

/** The session's token goes with the agent, and its files with it (the daemon removes them too, when it is reached). */
async function release(options: ExecOptions, workspace: string, session: string, owned: boolean): Promise<void> {
  const paths = statePaths(options.stateDir)
  try {
    // an owned token needs no daemon started just to end it (after `daemon stop --revoke-sessions`, say)
    await revokeSessions(paths, { workspace, session }, { startDaemon: !owned })
  } catch (err) {
    options.warn(
      `tutti: the session could not be revoked (${firstLine(err)}); ` +
        `\`tutti session revoke --session ${session}\` revokes it`,
    )
  }
  // the daemon's revoke removes them too; one left behind (EACCES, EBUSY) must not fail the agent's exit
  await removeSessionDirs(paths, [{ workspace, session }]).catch(() => undefined)
}
