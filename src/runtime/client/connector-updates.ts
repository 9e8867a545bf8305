import type { InstallChange } from '../install/install-change.js'
import type { OutdatedConnector } from '../install/outdated.js'
import type { StatePaths } from '../paths.js'
import { npmOriginSpec } from '../store/install-origin.js'
import type { ConnectorState } from '../control-protocol/connector-state.js'
import type { OutcomeWait } from './connector-outcome.js'
import { Connectors, type InstallRequest } from './connectors.js'

export interface UpdatedConnector {
  key: string
  from: string
  to: string
  change: InstallChange
  state?: ConnectorState
}

export interface UpdateOutcome {
  updated: UpdatedConnector[]
  /** Already at the version their spec wants. */
  current: Array<{ key: string; version: string; latest: string | null }>
  /** The registry could not be asked, or the new version did not install or start; the others went on. */
  failed: Array<{ key: string; error: string }>
}

/**
 * `connector update`: each chosen connector whose recorded `npm:` spec now
 * resolves to another version, or whose server.json package has a newer
 * one, is installed again the way it was (same source, --key, --server,
 * arguments, --allow-scripts): the upgrade path of install, which keeps
 * credentials, settings, the OAuth grant and data.
 */
export async function updateConnectors(
  paths: StatePaths,
  env: NodeJS.ProcessEnv,
  request: OutcomeWait & Pick<InstallRequest, 'notice' | 'progress'>,
  keys?: string[],
): Promise<UpdateOutcome> {
  const { outdatedConnectors } = await import('../install/outdated.js')
  const rows: OutdatedConnector[] = await outdatedConnectors(paths, env, keys)
  const outcome: UpdateOutcome = { updated: [], current: [], failed: [] }
  const connectors = new Connectors(paths, env)
  for (const row of rows) {
    if (row.error) {
      outcome.failed.push({ key: row.key, error: row.error })
      continue
    }
    if (!row.outdated) {
      outcome.current.push({ key: row.key, version: row.installed, latest: row.latest })
      continue
    }
    const { origin } = row
    const install: InstallRequest = {
      wait: request.wait,
      timeoutMs: request.timeoutMs,
      ...(request.notice ? { notice: request.notice } : {}),
      ...(request.progress ? { progress: request.progress } : {}),
      ...(origin.key !== undefined ? { key: origin.key } : {}),
      ...(origin.server !== undefined ? { server: origin.server } : {}),
      ...(origin.args?.length ? { args: origin.args } : {}),
      ...(origin.allowScripts ? { allowScripts: true } : {}),
      // a server.json keeps its pin; the newer package is asked for beside it
      ...(npmOriginSpec(origin.source) ? {} : { packageVersion: row.wanted! }),
    }
    try {
      const result = await connectors.install(origin.source, install)
      const to = result.version
      const state = result.state ? { state: result.state } : {}
      outcome.updated.push({ key: row.key, from: row.installed, to, change: result.change, ...state })
    } catch (err) {
      // reported per connector in the outcome; one failed update does not stop the others
      outcome.failed.push({ key: row.key, error: (err as Error).message })
    }
  }
  return outcome
}
