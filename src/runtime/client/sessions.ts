import path from 'node:path'
import { isTuttiError } from '../errors.js'
import { SERVER_NAME } from '../names.js'
import { resolveStateDir, statePaths, type StatePaths } from '../paths.js'
import type { AvailableResult } from '../control-protocol/available.js'
import type { Provider, sessionPrepareMessage } from '../control-protocol/session-prepare.js'
import type { sessionRevokeMessage } from '../control-protocol/session-revoke.js'
import type { MCPServerBinding, PreparedRuntime, ProviderProjection } from '../sessions/prepared-runtime.js'
import { TOKEN_ENV } from '../sessions/prepared-runtime.js'
import { acpSupportsHttp, plainAcp, projectAcp } from '../sessions/projections/acp.js'
import { projectClaude } from '../sessions/projections/claude.js'
import { projectCodex } from '../sessions/projections/codex.js'
import { runtimePrompt } from '../sessions/runtime-prompt.js'
import { freshSessionDir } from '../sessions/session-dir.js'
import type { SessionOwner } from '../sessions/session-record.js'
import { requestedTtl } from '../sessions/session-ttl.js'
import { ensureDaemon, findDaemon } from './ensure-daemon.js'

export interface PrepareRuntimeOptions {
  provider: Provider
  workspace: string
  session: string
  /** The tutti state directory; defaults to TUTTI_STATE_DIR / XDG / the platform default. */
  stateDir?: string
  /**
   * ACP only: the agent's `initialize` response (the result, or the whole
   * JSON-RPC response). Connector context is attached only when it declares
   * `agentCapabilities.mcpCapabilities.http === true`.
   */
  agentInitialize?: unknown
  /** The agent host's environment (PATH, CODEX_HOME, HOME); defaults to process.env. */
  env?: NodeJS.ProcessEnv
  /**
   * How long the token lives (seconds). Default: TUTTI_SESSION_TTL, else 7 days; a token with an
   * `owner` has none by default (it ends with the owner).
   */
  ttlSeconds?: number
  /** The process whose end ends the session (sessions/session-owner.ts thisOwner()). */
  owner?: SessionOwner
}

/**
 * Prepare one agent session (DESIGN §10): a session token from the daemon,
 * the one authoritative `mcpServers` list, the Skill roots, and the
 * provider's projection built from exactly those. This is the function
 * behind `tutti session prepare` and the library export for TypeScript
 * agent hosts.
 */
export async function prepareRuntime(options: PrepareRuntimeOptions): Promise<PreparedRuntime> {
  const paths = statePaths(
    options.stateDir ? path.resolve(options.stateDir) : resolveStateDir(options.env ?? process.env),
  )
  const env = options.env ?? process.env
  // bad input before anything else, ACP included: it is not the daemon failing
  const ttlSeconds = options.ttlSeconds ?? requestedTtl(undefined, env, options.owner !== undefined)
  const lifetime = {
    ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
    ...(options.owner ? { owner: options.owner } : {}),
  }
  if (options.provider === 'acp') {
    // an ACP agent must never fail to start because of connectors: anything short of a clear "yes" gives a plain
    // session
    const support = acpSupportsHttp(options.agentInitialize)
    if (!support.ok) return plainRuntime(options, support.reason)
    try {
      return await prepareWithDaemon(paths, options, env, lifetime)
    } catch (err) {
      // an ACP agent starts anyway: the reason goes into the plain session's projection
      return plainRuntime(
        options,
        `the tutti daemon could not be reached: ${isTuttiError(err) ? err.message : (err as Error).message}`,
      )
    }
  }
  return prepareWithDaemon(paths, options, env, lifetime)
}

async function prepareWithDaemon(
  paths: StatePaths,
  options: PrepareRuntimeOptions,
  env: NodeJS.ProcessEnv,
  lifetime: { ttlSeconds?: number; owner?: SessionOwner },
): Promise<PreparedRuntime> {
  const daemon = await ensureDaemon(paths)
  const issued = await daemon.call<typeof sessionPrepareMessage>('session-prepare', {
    provider: options.provider,
    workspace: options.workspace,
    session: options.session,
    ...lifetime,
  })
  const available: AvailableResult = await daemon.available()
  const mcpServers: MCPServerBinding[] = [
    { name: SERVER_NAME, type: 'http', url: issued.url, headers: { Authorization: `Bearer ${issued.token}` } },
  ]
  const shimPath = `${paths.binDir}${path.delimiter}${env.PATH ?? ''}`
  const dir = await freshSessionDir(paths, options.workspace, options.session)
  let projection: ProviderProjection
  if (options.provider === 'acp') {
    projection = await projectAcp(mcpServers, {
      token: issued.token,
      initializeResponse: options.agentInitialize,
      path: shimPath,
      skillRoots: issued.skillRoots,
      sessionDir: dir,
    })
  } else {
    projection =
      options.provider === 'claude'
        ? await projectClaude(dir, mcpServers, issued.skillRoots, issued.token)
        : await projectCodex(dir, mcpServers, issued.skillRoots, env)
  }
  return {
    provider: options.provider,
    workspace: options.workspace,
    session: options.session,
    env: { PATH: shimPath, [TOKEN_ENV]: issued.token, ...(projection.kind === 'codex' ? projection.env : {}) },
    mcpServers,
    skillRoots: issued.skillRoots.map(({ connector, dir }) => ({ connector, dir })),
    projection,
    prompt: runtimePrompt(available),
  }
}

/** No connector context at all: no servers, no Skill roots, no PATH change, no token. */
function plainRuntime(options: PrepareRuntimeOptions, reason: string): PreparedRuntime {
  return {
    provider: options.provider,
    workspace: options.workspace,
    session: options.session,
    env: {},
    mcpServers: [],
    skillRoots: [],
    projection: plainAcp(reason),
    prompt: '',
  }
}

/**
 * Revoke by session (optionally within a workspace), or every token.
 * `startDaemon: false`: only at a daemon that runs (a token with an owner
 * needs none started: the next daemon finds the owner gone).
 */
export async function revokeSessions(
  paths: StatePaths,
  filter: { session?: string; workspace?: string; all?: boolean },
  options: { startDaemon?: boolean } = {},
): Promise<{ revoked: number }> {
  const daemon = (await findDaemon(paths)) ?? (options.startDaemon === false ? undefined : await ensureDaemon(paths))
  if (!daemon) return { revoked: 0 }
  return daemon.call<typeof sessionRevokeMessage>('session-revoke', filter)
}
