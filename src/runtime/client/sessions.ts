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
import { contextBudget, contextWarnings } from '../sessions/context-budget.js'
import { flagsLayer, projectLayer } from '../sessions/project-view.js'
import { freshSessionDir } from '../sessions/session-dir.js'
import type { SessionOwner } from '../sessions/session-record.js'
import type { ViewLayer } from '../sessions/session-view.js'
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
  /** Only these connectors (`--connectors`); and not these (`--hide-connectors`). */
  connectors?: string[]
  hideConnectors?: string[]
  /** The session sees this one connector under its server's own names (`--as`). */
  as?: string
  /**
   * The token of the session this one is prepared in, whose view it narrows; defaults to `TUTTI_CONNECTOR_TOKEN`
   * of `env` (a session started inside an agent's session). null: none.
   */
  parentToken?: string | null
  /**
   * How long the token lives (seconds). Default: TUTTI_SESSION_TTL, else 7 days; a token with an
   * `owner` has none by default (it ends with the owner).
   */
  ttlSeconds?: number
  /** The process whose end ends the session (sessions/session-owner.ts thisOwner()). */
  owner?: SessionOwner
}

/**
 * The layers this preparation adds to the view: the workspace's project
 * file, then the flags. A bad one is refused here, before the daemon is asked.
 */
export function ownLayers(options: Pick<PrepareRuntimeOptions, 'workspace' | 'connectors' | 'hideConnectors' | 'as'>) {
  const flags = flagsLayer(options.connectors, options.hideConnectors, options.as)
  return [projectLayer(options.workspace), flags].filter((l): l is ViewLayer => l !== undefined)
}

/**
 * PATH for the session: its own bin (a narrowed view's) or the state bin dir first, and neither the state bin dir
 * nor another session's bin anywhere else in it (a session inside a session sees no more than its own).
 */
function sessionPath(paths: StatePaths, pathVar: string | undefined, binDir: string | undefined): string {
  const bins = path.join(paths.root, 'session-bin') + path.sep
  const rest = (pathVar ?? '').split(path.delimiter).filter((p) => p !== paths.binDir && !p.startsWith(bins))
  return [binDir ?? paths.binDir, ...rest].join(path.delimiter)
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
  const layers = ownLayers(options)
  const budget = contextBudget(env)
  const parentToken = options.parentToken === undefined ? env[TOKEN_ENV] : (options.parentToken ?? undefined)
  const daemon = await ensureDaemon(paths)
  const issued = await daemon.call<typeof sessionPrepareMessage>('session-prepare', {
    provider: options.provider,
    workspace: options.workspace,
    session: options.session,
    ...(layers.length ? { view: layers } : {}),
    ...(parentToken ? { parentToken } : {}),
    ...lifetime,
  })
  const available: AvailableResult = await daemon.available(issued.token)
  const mcpServers: MCPServerBinding[] = [
    { name: SERVER_NAME, type: 'http', url: issued.url, headers: { Authorization: `Bearer ${issued.token}` } },
  ]
  const shimPath = sessionPath(paths, env.PATH, issued.binDir)
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
    context: issued.context,
    view: issued.view,
    warnings: contextWarnings(issued.context, { ...issued.view, skills: issued.skillRoots.length }, budget),
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
    context: { tools: 0, bytes: 0, tokens: 0 },
    view: { narrowed: false, sources: [], connectors: [] },
    warnings: [],
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
