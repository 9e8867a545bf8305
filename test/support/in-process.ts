import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { InstallRequest } from '../../src/runtime/client/connectors.js'
import type { Provider } from '../../src/runtime/control-protocol/session-prepare.js'
import { statePaths } from '../../src/runtime/paths.js'
import type { PreparedRuntime } from '../../src/runtime/sessions/prepared-runtime.js'
import { REPO, tuttiEnv } from './tutti.js'

/*
 * The runtime calls behind `connector install` and `session prepare`, made in the test's own process, for the
 * setup of a test whose subject is something else: a test of the CLI runs the CLI (tutti() in tutti.ts). A CLI
 * start costs 0.3 to 0.5 s of CPU on a loaded machine; the suite is CPU-bound on two cores, and its setup made
 * hundreds of them. The calls are the built ones from dist/, as the CLI's, with the environment the CLI would
 * have (tuttiEnv): the same PATH for commands and npm, and the same state dir for a daemon started on the way.
 */

const built = (rel: string) => import(pathToFileURL(path.join(REPO, 'dist', 'runtime', rel)).href)

/** How long the CLI waits for a connector's outcome by default (`--timeout`). */
const OUTCOME_WAIT = { wait: true, timeoutMs: 45_000 }

/** `tutti connector install SOURCE --json`: the same result, or the same error thrown. */
export async function installed(
  stateDir: string,
  source: string,
  request: Omit<InstallRequest, 'wait' | 'timeoutMs'> = {},
): Promise<any> {
  const { Connectors } = await built('client/connectors.js')
  return new Connectors(statePaths(stateDir), tuttiEnv(stateDir)).install(source, { ...OUTCOME_WAIT, ...request })
}

/** `tutti connector uninstall KEY --json`. */
export async function uninstalled(stateDir: string, key: string, options = { purge: false }): Promise<any> {
  const { Connectors } = await built('client/connectors.js')
  return new Connectors(statePaths(stateDir), tuttiEnv(stateDir)).uninstall(key, options)
}

/** `tutti session prepare --provider P --workspace W --session S --json`: the prepared runtime. */
export async function prepared(
  stateDir: string,
  options: {
    provider?: Provider
    workspace?: string
    session: string
    /** The session's view (`--connectors`, `--hide-connectors`) and the session it is prepared in. */
    connectors?: string[]
    hideConnectors?: string[]
    /** `--as`: the one connector the session sees under its server's own names. */
    as?: string
    parentToken?: string
  },
): Promise<PreparedRuntime> {
  const { prepareRuntime } = await built('client/sessions.js')
  const { provider, workspace, parentToken, ...rest } = options
  return prepareRuntime({
    ...rest,
    provider: provider ?? 'codex',
    workspace: workspace ?? 'ws',
    stateDir,
    env: tuttiEnv(stateDir, parentToken ? { TUTTI_CONNECTOR_TOKEN: parentToken } : {}),
  })
}

/** `tutti connector connect KEY --env NAME=VALUE… --set NAME=VALUE…` (no OAuth sign-in). */
export async function connected(
  stateDir: string,
  key: string,
  given: { env?: Record<string, string>; set?: Record<string, string> } = {},
): Promise<any> {
  const { Connectors } = await built('client/connectors.js')
  const keys = Object.entries(given.env ?? {}).map(([name, value]) => ({ name, value, secret: false, flag: '--env' }))
  const request = { keys, settings: given.set ?? {}, ...OUTCOME_WAIT }
  return new Connectors(statePaths(stateDir), tuttiEnv(stateDir)).connect(key, request)
}
